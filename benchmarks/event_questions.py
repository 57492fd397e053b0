"""The questions of a data set that place what they ask by an event rather than a date.

    .venv/bin/python -m benchmarks.event_questions [--locomo DIR] [--choose BANK …]
        [--persona DIR …] [--beam DIR] [--budget mid]

"Why did Lucía leave Atlântico?", "What did Melanie do after the road trip?": recall ranks
these by the period on one side of the event, dated by its best match
(``hindsight_tools.recall.anchored``), so :mod:`benchmarks.families` scores them apart as
well as in their own families. A question counts when the engine reads it so: it names
no period of its own that ranks (``extract_time_window`` at its ``query_time``; a vague
one, "recently", doesn't) and ``event_relation`` reads one side of an event; adversarial
ones are left out, as in the families' overall rows.

Run as a module, it asks only those questions, of the banks an earlier
:mod:`benchmarks.families` run retained in the store of ``HINDSIGHT_API_DATA_DIR`` (a bank
that isn't there is retained), and prints the table ``families`` ends with: a minute
where the whole families run takes ten, for comparing settings (every knob is an
``HINDSIGHT_API_*`` variable, so a variant is a run with another environment).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from hindsight_tools.evaluation import (
    ADVERSARIAL_NAME,
    BankData,
    Dataset,
    Report,
    Score,
    aggregate,
    load_dataset,
    run_eval,
)
from hindsight_tools.query.events import event_relation
from hindsight_tools.query.time_window import extract_time_window


def placed_by_an_event(datasets: Iterable[Dataset]) -> set[str]:
    """The ids of the questions the engine ranks by a period on one side of an event."""
    placed = set()
    for dataset in datasets:
        for bank in dataset.banks:
            for question in bank.questions:
                if question.category_name == ADVERSARIAL_NAME:
                    continue
                window = extract_time_window(question.question, _asked_at(question.query_time))
                if window is not None and not window.vague:  # a vague one doesn't rank
                    continue
                if event_relation(question.question) is not None:
                    placed.add(question.qid)
    return placed


def event_score(report: Report, placed: set[str], name: str) -> Score:
    """Recall@k of the questions of ``report`` that are in ``placed``."""
    rows = [row for row in report.questions if row.qid in placed]
    return aggregate(rows, report.ks).overall.model_copy(update={"name": name})


def _asked_at(query_time: str | None) -> datetime:
    """When a question is asked: its ``query_time`` (the parser takes a naive one as UTC),
    else now, as recall does."""
    return datetime.now(UTC) if query_time is None else datetime.fromisoformat(query_time)


def only_placed(dataset: Dataset) -> Dataset:
    """``dataset`` with only its questions placed by an event."""
    placed = placed_by_an_event([dataset])
    return Dataset(
        banks=tuple(
            BankData(b.bank, b.items, tuple(q for q in b.questions if q.qid in placed))
            for b in dataset.banks
        )
    )


def main(argv: Sequence[str] | None = None) -> int:
    # families imports this module for its table; imported here, it would be a cycle
    from benchmarks.families import CHOOSE_DEFAULT, KS, PERSONAS, event_rows, halves_of
    from hindsight_tools import MemoryEngine

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo", type=Path, default=os.environ.get("HINDSIGHT_LOCOMO_DIR"))
    parser.add_argument("--choose", nargs="*", help="LoCoMo banks to choose on")
    parser.add_argument("--persona", type=Path, nargs="*", default=list(PERSONAS))
    parser.add_argument("--beam", type=Path, help="a converted BEAM folder (not in the repo)")
    parser.add_argument("--budget", default="mid", choices=["low", "mid", "high"])
    args = parser.parse_args(argv)
    parts: list[tuple[str, Dataset]] = []
    if args.locomo is not None:
        locomo = only_placed(load_dataset(args.locomo))
        names = [b.bank for b in locomo.banks]
        choose = set(args.choose or names[:CHOOSE_DEFAULT])
        for half, chosen in (("choose", True), ("confirm", False)):
            side = tuple(b for b in locomo.banks if (b.bank in choose) == chosen)
            parts.append((f"LoCoMo, {half} half", Dataset(banks=side)))
    for folder in args.persona:
        parts.append((folder.name, only_placed(load_dataset(folder))))
    if args.beam is not None:
        beam = only_placed(load_dataset(args.beam))
        for half, names in halves_of([b.bank for b in beam.banks]).items():
            side = tuple(beam.bank(name) for name in names)
            parts.append((f"BEAM, {half} half", Dataset(banks=side)))
    scores = []
    with MemoryEngine() as engine:
        for name, dataset in parts:
            report = run_eval(engine, dataset, budget=args.budget, fresh=False, ks=KS)
            scores.append(report.overall.model_copy(update={"name": name}))
    print(" ".join([".venv/bin/python -m benchmarks.event_questions", *(argv or sys.argv[1:])]))
    print("\n".join(event_rows(scores, KS)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

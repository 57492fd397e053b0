"""The time window the parser reads from every text of a data set, and what a change moved.

    .venv/bin/python -m benchmarks.time_windows DIR [DIR …] --out NEW.json [--compare OLD.json]

Reads each folder as :func:`hindsight_tools.evaluation.load_dataset` does and runs
:func:`hindsight_tools.query.time_window.extract_time_window` over every memory (at its
own date, as recall reads the periods memories' words name), every question (at its
``query_time``) and the time-scoped questions :mod:`benchmarks.families` asks of it (at
the time it asks them). No store and no model: a minute for LoCoMo dev and BEAM 100K.

A change to the parser is read for regressions by running this at the commit before it
(a ``git worktree``) with ``--out OLD.json``, then at the change with ``--compare
OLD.json``: it prints every text whose window moved, old and new, and how many of how
many did. Which moves are right is for a reader to judge; the count says how far a
change reaches on data it was not written for.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.families import last_question_time
from benchmarks.time_questions import time_questions
from hindsight_tools.evaluation import BankData, load_dataset
from hindsight_tools.query.time_window import extract_time_window

Row = dict[str, Any]


def _moment(value: object) -> datetime | None:
    if value is None:
        return None
    moment = datetime.fromisoformat(str(value))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def texts(bank: BankData) -> Iterator[tuple[str, str, datetime]]:
    """(kind, text, moment read at) of every dated text of ``bank``."""
    for item in bank.items:
        moment = _moment(item.get("occurred_start"))
        if moment is not None:
            yield "memory", str(item["text"]), moment
    for question in bank.questions:
        moment = _moment(question.query_time)
        if moment is not None:
            yield "question", question.question, moment
    for asked in time_questions(bank, last_question_time(bank)):
        yield "time-scoped", asked.question, asked.query_time


def window_rows(folders: Sequence[Path]) -> list[Row]:
    """One row per text: where it is from, its words, when it was read and its window."""
    rows = []
    for folder in folders:
        for bank in load_dataset(folder).banks:
            for kind, text, moment in texts(bank):
                found = extract_time_window(text, moment)
                window = (
                    None if found is None else [_iso(found.start), _iso(found.end), found.vague]
                )
                rows.append(
                    {
                        "bank": bank.bank,
                        "kind": kind,
                        "text": text,
                        "at": moment.isoformat(),
                        "window": window,
                    }
                )
    return rows


def moved(old: Sequence[Row], new: Sequence[Row]) -> list[tuple[Row, Row]]:
    """The rows whose window differs, paired by their text and moment; the two runs must
    have read the same texts."""
    key = ("bank", "kind", "text", "at")
    if [[r[k] for k in key] for r in old] != [[r[k] for k in key] for r in new]:
        raise ValueError("the two runs read different texts: compare runs over the same data")
    return [(a, b) for a, b in zip(old, new, strict=True) if a["window"] != b["window"]]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", type=Path, nargs="+", help="LoCoMo-format data folders")
    parser.add_argument("--out", type=Path, required=True, help="where to write the windows")
    parser.add_argument("--compare", type=Path, help="an earlier run's --out, to diff with")
    args = parser.parse_args(argv)
    rows = window_rows(args.folders)
    args.out.write_text(json.dumps(rows, ensure_ascii=False))
    if args.compare is None:
        print(f"{len(rows)} texts read")
        return 0
    changes = moved(json.loads(args.compare.read_text()), rows)
    for before, after in changes:
        print(f"{after['bank']} {after['kind']} at {after['at']}: {after['text'][:160]!r}")
        print(f"    before {before['window']}\n    after  {after['window']}")
    print(f"{len(changes)} of {len(rows)} windows moved")
    return 0


if __name__ == "__main__":
    sys.exit(main())

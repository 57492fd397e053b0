"""Recall by question family, on the dev data only: names, paraphrase, time, causes, multi-hop.

    .venv/bin/python -m benchmarks.families --locomo DIR [--choose BANK …] [--persona DIR …]
        [--beam DIR] [--budget mid] [--reuse] [--skip …] [--out FILE] [--json FILE]

``--locomo`` is the LoCoMo folder; without it, ``$HINDSIGHT_LOCOMO_DIR``. Only a run that
skips both of its tables (``--skip locomo time``), or one given ``--beam`` that skips
``locomo``, needs neither.

One run reports, each on its own table:

* **LoCoMo, per category** (recall@k), separately for the conversations defaults are chosen
  on (``--choose``, by default the first three of the file) and for the rest, which confirm
  them. A default that only helps the first half is not kept.
* **Time-scoped questions generated from the same conversations' session dates**
  (:mod:`benchmarks.time_questions`), of eight shapes: a month ("What did Caroline talk
  about in July 2023?"), a season ("What happened in the summer of 2023?"), a month range
  ("… between March and May 2023?"), two months joined ("… in June and July 2023?",
  "June-July 2023", "June or July 2023"), a relative period ("What did Jon do last month?",
  asked on the 15th of the following month), a month of last year ("… in March of last
  year?", asked a year on), the week before a day ("What did Jon do the week before
  August 3, 2023?", the Monday-Sunday week before that day's) and a week told on a day
  ("What did Jon talk about last week, as mentioned on August 3, 2023?", asked long after:
  that week and the days up to August 3). LoCoMo's
  own "temporal" category asks *when* something happened, never *what happened in* a
  period, so these are the only real-data questions of that shape. Scored by **window
  precision@k**, the share of the top k dated inside the asked period, next to its
  **floor**, the share of the whole bank dated there (what a recall blind to time gets on
  average), both halves apart. With ``--beam``, the same shapes are asked of BEAM's chats
  too, from their sessions' dates, in their user's words ("What did I talk about in March
  2024?"): data of another kind that time-scoped recall was never tuned on. A period that
  holds a whole bank is not asked about: every order would be inside it.
* **Scripted personas** (``--persona DIR …``, by default ``benchmarks/data/persona`` and
  ``benchmarks/data/persona-confirm``): a few dozen dated memories of one invented life
  each, with time-scoped, causal ("why"), name, paraphrase and multi-hop questions and the
  ids they expect; recall@k per family. The second was written after every default was
  set, with distractors (the same pastimes and people in other years, causes told in other
  words than the question's), and nothing is chosen on it.
* **BEAM** (``--beam DIR``: long user–assistant chats converted by the project's converter;
  its data has no licence and is never stored in this repository), per category, and
  overall for the first half of its chats (in the file's order), on which a change that
  only BEAM's long messages can show is chosen, and for the second half, which confirms
  it (``--skip beam`` leaves these out and keeps BEAM's time-scoped tables).
* **Questions placed by an event, not a date** ("Why did Lucía leave Atlântico?", "What
  did Melanie do after the road trip?"): those of the tables above that recall ranks by
  the period on one side of an event (:mod:`benchmarks.event_questions`), recall@k per
  LoCoMo half, persona and BEAM half.

Banks are those of ``hindsight-tools eval`` (``eval-`` + name) in the store of
``HINDSIGHT_API_DATA_DIR``: ``--reuse`` keeps what an earlier run retained and retains a
bank that isn't there yet. Every engine knob is an environment variable
(``HINDSIGHT_API_*``), so variants are runs with another environment. The Markdown report
goes to stdout (and ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.event_questions import event_score, placed_by_an_event
from benchmarks.time_questions import SHAPES, TimeQuestion, dated_memories, time_questions
from hindsight_tools.evaluation import (
    BankData,
    Dataset,
    Question,
    Report,
    Score,
    aggregate,
    load_dataset,
    run_eval,
)

if TYPE_CHECKING:
    from hindsight_tools import MemoryEngine
    from hindsight_tools.models import Budget

REPO = Path(__file__).resolve().parents[1]
LOCOMO_VARIABLE = "HINDSIGHT_LOCOMO_DIR"  # the LoCoMo data is not in the repository
# The second persona was written after every default was set, and nothing is chosen on it.
PERSONAS = (
    REPO / "benchmarks" / "data" / "persona",
    REPO / "benchmarks" / "data" / "persona-confirm",
)
CHOOSE_DEFAULT = 3
KS = (5, 10, 20, 50)
WINDOW_KS = (5, 10)


# --------------------------------------------------------------------------- metrics


def window_precision(in_window: set[str], ranked: Sequence[str | None], k: int) -> float:
    """The share of the top ``k`` dated inside the period. A recall that returns fewer than
    ``k`` memories is scored over ``k`` all the same: an empty slot is not in the period."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return sum(1 for d in ranked[:k] if d is not None and d in in_window) / k


def window_floor(in_window: set[str], bank_size: int) -> float:
    """What a ranking blind to time scores on average: the bank's share inside the period."""
    if bank_size < 1:
        raise ValueError("the floor of an empty bank is undefined")
    return len(in_window) / bank_size


# --------------------------------------------------------------------------- running


def _questions_dataset(banks: Sequence[BankData], asked: Sequence[TimeQuestion]) -> Dataset:
    by_bank: dict[str, list[Question]] = {}
    for n, q in enumerate(asked):
        by_bank.setdefault(q.bank, []).append(
            Question(
                qid=f"{q.bank}_time{n}",
                question=q.question,
                category=SHAPES.index(q.shape) + 1,
                category_name=q.shape,
                evidence=tuple(sorted(q.in_window)),
                query_time=q.query_time.isoformat(),
            )
        )
    return Dataset(
        banks=tuple(
            BankData(bank=b.bank, items=b.items, questions=tuple(by_bank.get(b.bank, ())))
            for b in banks
        )
    )


@dataclass(frozen=True)
class WindowRow:
    shape: str
    questions: int
    precision: dict[int, float]
    floor: float


def window_table(
    asked: Sequence[TimeQuestion], report: Report, bank_sizes: Mapping[str, int]
) -> list[WindowRow]:
    """Mean window precision@k and floor per shape, then over all shapes."""
    results = list(zip(asked, report.questions, strict=True))
    rows = []
    for shape in (*SHAPES, "all"):
        chosen = [(q, r) for q, r in results if shape in ("all", q.shape)]
        if not chosen:
            continue
        rows.append(
            WindowRow(
                shape=shape,
                questions=len(chosen),
                precision={
                    k: statistics.fmean(
                        window_precision(set(q.in_window), r.ranked, k) for q, r in chosen
                    )
                    for k in WINDOW_KS
                },
                floor=statistics.fmean(
                    window_floor(set(q.in_window), bank_sizes[q.bank]) for q, _ in chosen
                ),
            )
        )
    return rows


def halves_of(banks: Sequence[str]) -> dict[str, list[str]]:
    """The first half of ``banks`` (the larger one if odd) to choose on, the rest to
    confirm, in their order."""
    middle = (len(banks) + 1) // 2
    return {"choose": list(banks[:middle]), "confirm": list(banks[middle:])}


def half_scores(report: Report, halves: Mapping[str, Sequence[str]]) -> dict[str, Score]:
    """Overall recall@k of each half's questions (every category, none adversarial here)."""
    scores = {}
    for half, banks in halves.items():
        members = set(banks)
        rows = [q for q in report.questions if q.bank in members]
        scores[half] = aggregate(rows, report.ks).overall.model_copy(update={"name": half})
    return scores


def _half_rows(
    scores: Mapping[str, Score], halves: Mapping[str, Sequence[str]], ks: Sequence[int]
) -> list[str]:
    lines = [
        "| half | chats | questions | " + " | ".join(f"R@{k}" for k in ks) + " |",
        "|---|---|---:|" + "---:|" * len(ks),
    ]
    for half, score in scores.items():
        banks = halves[half]
        chats = f"{banks[0]} … {banks[-1]}" if len(banks) > 1 else ", ".join(banks)
        lines.append(f"| {half} | {chats} | {score.questions} | {_cells(score, ks)} |")
    return lines


def _recall_rows(report: Report, *, locomo: bool = False) -> list[str]:
    lines = [
        "| family | questions | " + " | ".join(f"R@{k}" for k in report.ks) + " |",
        "|---|---:|" + "---:|" * len(report.ks),
    ]
    # LoCoMo's category 5 is adversarial; other data numbers its categories otherwise
    overall = report.overall_no_adversarial if locomo else report.overall
    scores = [*report.categories, overall]
    for score in scores:
        lines.append(f"| {score.name} | {score.questions} | {_cells(score, report.ks)} |")
    return lines


def event_rows(scores: Sequence[Score], ks: Sequence[int]) -> list[str]:
    """The questions placed by an event (:mod:`benchmarks.event_questions`): one row per
    data set or half."""
    lines = [
        "| questions of | questions | " + " | ".join(f"R@{k}" for k in ks) + " |",
        "|---|---:|" + "---:|" * len(ks),
    ]
    for score in scores:
        lines.append(f"| {score.name} | {score.questions} | {_cells(score, ks)} |")
    return lines


def _cells(score: Score, ks: Sequence[int]) -> str:
    return " | ".join("n/a" if (v := score.recall.get(k)) is None else f"{v:.3f}" for k in ks)


def _latency(report: Report) -> str:
    lat = report.latency
    if lat.p50_ms is None or lat.p95_ms is None:
        return "latency: no recalls"
    return f"latency p50 {lat.p50_ms:.1f} ms, p95 {lat.p95_ms:.1f} ms over {lat.recalls} recalls"


def _window_lines(rows: Iterable[WindowRow]) -> list[str]:
    lines = [
        "| shape | questions | " + " | ".join(f"window P@{k}" for k in WINDOW_KS) + " | floor |",
        "|---|---:|" + "---:|" * (len(WINDOW_KS) + 1),
    ]
    for row in rows:
        cells = " | ".join(f"{row.precision[k]:.3f}" for k in WINDOW_KS)
        lines.append(f"| {row.shape} | {row.questions} | {cells} | {row.floor:.3f} |")
    return lines


def _time_section(
    engine: MemoryEngine, banks: Sequence[BankData], budget: Budget
) -> tuple[Report, list[str]]:
    """The time-scoped questions of ``banks`` asked of their retained banks, and their table."""
    asked = [q for b in banks for q in time_questions(b, last_question_time(b))]
    report = run_eval(engine, _questions_dataset(banks, asked), budget=budget, fresh=False, ks=KS)
    sizes = {b.bank: len(b.items) for b in banks}
    lines = _window_lines(window_table(asked, report, sizes))
    return report, [*lines, "", _latency(report), ""]


def last_question_time(bank: BankData) -> datetime:
    """When the time-scoped questions are asked of ``bank``: its last question's time, else
    the day after its last dated memory."""
    times = [q.query_time for q in bank.questions if q.query_time]
    if times:
        moment = datetime.fromisoformat(max(times))
    else:
        days = [d for _, d, _ in dated_memories(bank)]
        moment = datetime.combine(max(days), datetime.min.time()) + timedelta(days=1)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--locomo",
        type=Path,
        default=os.environ.get(LOCOMO_VARIABLE),
        help=f"LoCoMo folder (default: ${LOCOMO_VARIABLE})",
    )
    parser.add_argument(
        "--choose",
        nargs="+",
        help=f"the conversations defaults are chosen on (default: the first {CHOOSE_DEFAULT})",
    )
    parser.add_argument("--persona", type=Path, nargs="+", default=list(PERSONAS))
    parser.add_argument("--beam", type=Path, help="a converted BEAM folder (not in the repo)")
    parser.add_argument("--budget", choices=["low", "mid", "high"], default="mid")
    parser.add_argument(
        "--reuse", action="store_true", help="keep banks of an earlier run; retain the missing"
    )
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["locomo", "time", "persona", "beam"]
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument("--json", type=Path, help="every question's ranking, for analysis")
    args = parser.parse_args(argv)
    # BEAM's time-scoped tables alone need no LoCoMo
    beam_only_time = args.beam is not None and "locomo" in args.skip
    if args.locomo is None and not ({"locomo", "time"} <= set(args.skip) or beam_only_time):
        parser.error(
            f"no LoCoMo folder: give --locomo DIR or set {LOCOMO_VARIABLE} (the LoCoMo data is "
            "CC BY-NC and not part of the repository)"
        )

    from hindsight_tools import MemoryEngine

    locomo = load_dataset(args.locomo) if args.locomo is not None else Dataset(banks=())
    names = [b.bank for b in locomo.banks]
    choose = args.choose or names[:CHOOSE_DEFAULT]
    halves = {
        "choose": [n for n in names if n in choose],
        "confirm": [n for n in names if n not in choose],
    }
    command = " ".join([".venv/bin/python -m benchmarks.families", *(argv or sys.argv[1:])])
    out: list[str] = [f"`{command}`", ""]
    dumps: dict[str, Any] = {}
    placed = placed_by_an_event([locomo])
    by_event: list[Score] = []
    with MemoryEngine() as engine:
        out.append(f"reranker {engine.reranker_name}, budget {args.budget}")
        out.append("")
        fresh = not args.reuse
        for half, banks in halves.items():
            if not banks:
                continue
            if "locomo" not in args.skip:
                report = run_eval(
                    engine, locomo, budget=args.budget, banks=banks, fresh=fresh, ks=KS
                )
                dumps[f"locomo-{half}"] = json.loads(report.to_json())
                out += [f"## LoCoMo, {half} half ({', '.join(banks)})", ""]
                out += [*_recall_rows(report, locomo=True), "", _latency(report), ""]
                by_event.append(event_score(report, placed, f"LoCoMo, {half} half"))
            if "time" not in args.skip:
                selected = [locomo.bank(n) for n in banks]
                report, lines = _time_section(engine, selected, args.budget)
                dumps[f"time-{half}"] = json.loads(report.to_json())
                out += [f"## Time-scoped questions, {half} half", "", *lines]
        for folder in [] if "persona" in args.skip else args.persona:
            persona = load_dataset(folder)
            report = run_eval(engine, persona, budget=args.budget, fresh=True, ks=KS)
            by_event.append(event_score(report, placed_by_an_event([persona]), folder.name))
            dumps[folder.name] = json.loads(report.to_json())
            out += [f"## Scripted persona `{folder.name}`", "", *_recall_rows(report), ""]
            out += [_latency(report), ""]
        if args.beam is not None:
            beam = load_dataset(args.beam)
            beam_halves = halves_of([b.bank for b in beam.banks])
            if "beam" not in args.skip:
                report = run_eval(engine, beam, budget=args.budget, fresh=fresh, ks=KS)
                dumps["beam"] = json.loads(report.to_json())
                out += ["## BEAM", "", *_recall_rows(report), ""]
                out += _half_rows(half_scores(report, beam_halves), beam_halves, report.ks)
                out += ["", _latency(report), ""]
                beam_placed = placed_by_an_event([beam])
                for half, banks in beam_halves.items():
                    members = {q.qid for b in banks for q in beam.bank(b).questions}
                    by_event.append(
                        event_score(report, beam_placed & members, f"BEAM, {half} half")
                    )
            if "time" not in args.skip:
                for half, banks in beam_halves.items():
                    if not banks:
                        continue
                    report, lines = _time_section(
                        engine, [beam.bank(n) for n in banks], args.budget
                    )
                    dumps[f"beam-time-{half}"] = json.loads(report.to_json())
                    out += [f"## Time-scoped questions on BEAM, {half} half", "", *lines]
    if by_event:
        out += ["## Questions placed by an event, not a date", "", *event_rows(by_event, KS)]
    text = "\n".join(out)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    if args.json:
        args.json.write_text(json.dumps(dumps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

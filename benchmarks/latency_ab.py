"""Recall latency of several configurations in one run, interleaved question by question.

On a shared host the speed of the same code drifts by tens of percent within an hour, so two
`hindsight-tools eval` runs taken one after the other compare the host as much as the code.
Here every configuration answers the same question before the next question is asked, on
the same store, so a slow minute slows them all alike; the table gives each one's p50/p95 and
stage p50s, and its p50 as a ratio of the first configuration's.

    .venv/bin/python benchmarks/latency_ab.py --dataset DIR [--limit N] [--only WORDS …]
        [--placed-by-an-event] [--out FILE]

``--dataset`` is the LoCoMo folder (``memories.jsonl``, ``queries.jsonl``); without it,
``$HINDSIGHT_LOCOMO_DIR``.

The banks come from an earlier ``hindsight-tools eval`` (``eval-`` + conversation), so run
that first against the same ``HINDSIGHT_API_DATA_DIR``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if not __package__:
    # Run as a file, Python puts this folder on sys.path rather than the repository.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tqdm import tqdm

from benchmarks.event_questions import only_placed
from benchmarks.pair_dates import date_form
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.evaluation import (
    EVAL_BANK_PREFIX,
    EVAL_MAX_TOKENS,
    latency_percentiles,
    load_dataset,
)

LOCOMO_VARIABLE = "HINDSIGHT_LOCOMO_DIR"  # the LoCoMo data is not in the repository
# Not a setting: how the cross-encoder's documents carry their date (benchmarks.pair_dates).
DATE_FORM = "date_form"
_NEXT = "late interaction's first 8 kept, cross-encoder over the next"
# name -> settings changes from the defaults
CONFIGURATIONS: dict[str, dict[str, Any]] = {
    "default (late interaction's first 8 kept, cross-encoder over the next 6)": {},
    "default, without periods named by an event": {"event_window_alpha": 0.0},
    f"{_NEXT} 12": {"reranker_depth_mid": 12},
    f"{_NEXT} 16": {"reranker_depth_mid": 16},
    f"{_NEXT} 20": {"reranker_depth_mid": 20},
    f"{_NEXT} 20, dated in words alone": {"reranker_depth_mid": 20, DATE_FORM: "short"},
    f"{_NEXT} 20, undated": {"reranker_depth_mid": 20, DATE_FORM: "none"},
    "late interaction, passthrough": {"reranker_provider": "passthrough"},
}


def configuration(changes: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A configuration's settings changes, and the date form of its documents."""
    overrides = {name: value for name, value in changes.items() if name != DATE_FORM}
    return overrides, changes.get(DATE_FORM, "full")


STAGES = (
    "embed",
    "late_interaction_query",
    "arms",
    "hydrate",
    "late_interaction",
    "rerank",
    "token_filter",
    "total",
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--dataset",
        type=Path,
        default=os.environ.get(LOCOMO_VARIABLE),
        help=f"LoCoMo folder (default: ${LOCOMO_VARIABLE})",
    )
    parser.add_argument("--limit", type=int, default=40, help="questions per conversation")
    parser.add_argument("--out", type=Path, help="also write the Markdown table here")
    parser.add_argument(
        "--placed-by-an-event",
        action="store_true",
        help="only the questions recall ranks by a period on one side of an event "
        "(benchmarks/event_questions.py), before --limit",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="WORDS",
        help="only the configurations whose name contains one of these (default: all)",
    )
    args = parser.parse_args(argv)
    chosen = {
        name: changes
        for name, changes in CONFIGURATIONS.items()
        if not args.only or any(words in name for words in args.only)
    }
    if not chosen:
        parser.error(f"--only matches no configuration; they are {list(CONFIGURATIONS)}")
    if args.dataset is None:
        parser.error(
            f"no LoCoMo folder: give --dataset DIR or set {LOCOMO_VARIABLE} (the LoCoMo data is "
            "CC BY-NC and not part of the repository)"
        )

    dataset = load_dataset(args.dataset)
    if args.placed_by_an_event:
        dataset = only_placed(dataset)
    asked = [(b.bank, q) for b in dataset.banks for q in b.questions[: args.limit]]
    base = Settings()
    engines, forms = {}, {}
    for name, changes in chosen.items():
        overrides, forms[name] = configuration(changes)
        engines[name] = MemoryEngine(settings=base.with_overrides(overrides))
    stages: dict[str, list[dict[str, float]]] = {name: [] for name in engines}
    load_before = os.getloadavg()[0]
    try:
        for bank, question in tqdm(asked, unit="question", desc="interleaved recalls"):
            for name, engine in engines.items():
                with date_form(forms[name]):
                    result = engine.recall(
                        EVAL_BANK_PREFIX + bank,
                        question.question,
                        query_timestamp=question.query_time,
                        max_tokens=EVAL_MAX_TOKENS,
                        trace=True,
                    )
                assert result.trace is not None
                stages[name].append(result.trace.stages)
    finally:
        for engine in engines.values():
            engine.close()

    first = statistics.median(s["total"] for s in next(iter(stages.values())))
    lines = [
        "| configuration | p50 ms | p95 ms | p50 / first | "
        + " | ".join(f"{s} p50" for s in STAGES[:-1])
        + " |",
        "|---|---:|---:|---:|" + "---:|" * (len(STAGES) - 1),
    ]
    for name, runs in stages.items():
        p50, p95 = latency_percentiles([s["total"] * 1000 for s in runs]) or (0.0, 0.0)
        cells = [statistics.median(s.get(stage, 0.0) for s in runs) * 1000 for stage in STAGES]
        lines.append(
            f"| {name} | {p50:.1f} | {p95:.1f} | {p50 / (first * 1000):.2f} | "
            + " | ".join(f"{v:.1f}" for v in cells[:-1])
            + " |"
        )
    command = " ".join([".venv/bin/python benchmarks/latency_ab.py", *(argv or sys.argv[1:])])
    scope = "placed by an event" if args.placed_by_an_event else "all categories"
    report = (
        f"`{command}`\n\n{len(asked)} questions ({scope}), each asked of every "
        "configuration in turn, budget mid, on the banks of an earlier eval run.\n\n"
        + "\n".join(lines)
        + f"\n\nLoad average (1 min) {load_before:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end (this run included)."
    )
    print(report)
    if args.out:
        args.out.write_text(report + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

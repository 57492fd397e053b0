"""How deep should the cross-encoder go, and where should it start? Recall@k by replay.

Each dev-set question is asked once with the cross-encoder scoring the ``--max-depth``
best candidates of the late-interaction order (nothing kept); the inputs of the final
stage (the candidate list, MaxSim scores, time window, scores, evidence for the boosts)
are captured, and the final order is recomputed with the engine's own ``rerank_head`` and
``rank_final`` for every smaller depth and for every number of candidates *kept* in place
above the scored band (``HINDSIGHT_API_RERANKER_KEEP``): keep ``a`` and depth ``d`` score
the candidates ``a+1 … a+d`` of the same order, so each row is what ``eval`` would print
with those settings, for one pass of the model instead of one per setting (the model
scores every pair alone, so a pair's score is the same in the pass as in the engine). The
run checks that the replay at ``--max-depth`` reproduces the engine's own order, and that
the engine's own top 10 at the defaults' keep and depth is the replay's.

Every row is reported for the conversations defaults are chosen on (``--choose``, by
default the first three of the file) and for the rest, which confirm them.

Then *adaptive* depth (nothing kept): score ``first`` pairs and go on to ``then`` only when
the best normalised score among them is below a threshold (the model has not found a
confident answer), for a small grid; what matters for the p50 is the share of questions
that stop at ``first``.

Also printed: the *oracle* recall@10 at each depth, what a perfect reranker of those
candidates could reach (evidence first), which bounds any model there; and the
cross-encoder's median cost per pair in this run.

    .venv/bin/python benchmarks/depth_replay.py --dataset DIR [--max-depth 32]
        [--choose BANK …] [--limit N] [--date-form full|short|none] [--out FILE]

``--date-form`` changes how the cross-encoder's documents carry their date
(:mod:`benchmarks.pair_dates`), for every recall of the run.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

if not __package__:
    # Run as a file, Python puts this folder on sys.path rather than the repository.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tqdm import tqdm

import hindsight_tools.recall.pipeline as pipeline
from benchmarks.pair_dates import DATE_FORMS, date_form
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.evaluation import (
    ADVERSARIAL_NAME,
    EVAL_BANK_PREFIX,
    EVAL_MAX_TOKENS,
    load_dataset,
    recall_at_k,
)
from hindsight_tools.recall.fusion import FusedCandidate
from hindsight_tools.recall.prerank import kept_places, rank_final, rerank_head
from hindsight_tools.recall.rerank.base import RerankOutcome
from hindsight_tools.recall.scoring import Evidence

LOCOMO_VARIABLE = "HINDSIGHT_LOCOMO_DIR"  # the LoCoMo data is not in the repository
DEPTHS = (4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 60)
KEEPS = (0, 4, 6, 7, 8, 9, 10)
KS = (5, 10, 20, 50)
CHOOSE_DEFAULT = 3
ADAPTIVE_FIRST = (16,)
ADAPTIVE_THEN = (32, 48, 60)
ADAPTIVE_CONFIDENT = (0.9, 0.95, 0.98)


@dataclass
class Captured:
    """One question's final-stage inputs at the maximum depth."""

    bank: str
    evidence_ids: list[str]
    head: list[FusedCandidate]
    window: dict[str, float] | None  # each candidate's window weight (None: no window)
    cross_encoder: bool  # what the engine told kept_places
    scores: dict[str, float]
    evidence: dict[str, Evidence]
    scoring: dict[str, Any]
    dia: dict[str, str | None]
    engine_order: list[str | None]
    rerank_seconds: float
    reranker: str


def replay(q: Captured, depth: int, keep: int = 0) -> list[str | None]:
    """The ranked ``dia_id``s had the cross-encoder scored ``depth`` candidates after the
    first ``keep`` (none for a question that names a period, as in the engine)."""
    prerank = q.scoring.get("prerank")
    keep = kept_places(
        keep, prerank=prerank, window=q.scoring["window"], cross_encoder=q.cross_encoder
    )
    kept, scored, rest = rerank_head(q.head, depth, prerank, q.window, keep)
    candidates = kept + scored + rest
    outcome = RerankOutcome(scores=[q.scores[c.id] for c in scored], reranker=q.reranker)
    scoring = {**q.scoring, "kept": len(kept)}
    ranked = rank_final(candidates, outcome, [q.evidence[c.id] for c in candidates], **scoring)
    return [q.dia[r.candidate.id] for r in ranked]


def oracle_at_10(q: Captured, depth: int, order: list[str | None] | None = None) -> float:
    """Recall@10 had a perfect reranker scored the same ``depth`` candidates (nothing kept):
    evidence first, then the rest of them, then the unscored tail in the order the engine
    gives it. ``order`` is ``replay(q, depth)`` when the caller already has it."""
    if order is None:
        order = replay(q, depth)
    n = min(depth, len(q.head))  # rank_final puts every scored candidate first
    wanted = set(q.evidence_ids)
    best = [d for d in order[:n] if d in wanted] + [d for d in order[:n] if d not in wanted]
    return recall_at_k(q.evidence_ids, best + order[n:], 10)


def capture(engine: MemoryEngine, bank: str, question: Any) -> Captured:
    seen: dict[str, Any] = {}

    def keep_spy(keep: int, **given: Any) -> int:
        seen["cross_encoder"] = given["cross_encoder"]
        return kept_places(keep, **given)

    def head_spy(
        head: Sequence[FusedCandidate],
        depth: int,
        prerank: dict[str, float] | None = None,
        window: dict[str, float] | None = None,
        keep: int = 0,
    ) -> Any:
        cut = rerank_head(head, depth, prerank, window, keep)
        seen.update(head=list(head), window=window, scored=cut.scored)
        return cut

    def final_spy(
        candidates: Sequence[FusedCandidate],
        outcome: RerankOutcome,
        evidence: Sequence[Evidence],
        **scoring: Any,
    ) -> Any:
        seen.update(
            candidates=list(candidates), outcome=outcome, evidence=list(evidence), scoring=scoring
        )
        return rank_final(candidates, outcome, evidence, **scoring)

    with (
        mock.patch.object(pipeline, "kept_places", keep_spy),
        mock.patch.object(pipeline, "rerank_head", head_spy),
        mock.patch.object(pipeline, "rank_final", final_spy),
    ):
        result = engine.recall(
            bank,
            question.question,
            query_timestamp=question.query_time,
            max_tokens=EVAL_MAX_TOKENS,
            trace=True,
        )
    outcome: RerankOutcome = seen["outcome"]
    candidates: list[FusedCandidate] = seen["candidates"]
    scored: list[FusedCandidate] = seen["scored"][: len(outcome.scores)]  # a deadline cuts it
    ids = [c.id for c in seen["head"]]
    # The dia_id of every candidate, not only of the memories returned.
    with engine._pool.connection() as conn:
        dia = dict(
            conn.execute(
                "SELECT id::text, metadata->>'dia_id' FROM memory_units WHERE bank_id = %s "
                "AND id::text = ANY(%s)",
                (bank, ids),
            ).fetchall()
        )
    assert result.trace is not None
    scoring = {k: v for k, v in seen["scoring"].items() if k != "kept"}
    return Captured(
        bank=bank,
        evidence_ids=list(question.evidence),
        head=seen["head"],
        window=seen["window"],
        cross_encoder=seen["cross_encoder"],
        scores={c.id: s for c, s in zip(scored, outcome.scores, strict=True)},
        evidence={c.id: e for c, e in zip(candidates, seen["evidence"], strict=True)},
        scoring=scoring,
        dia={i: dia.get(i) for i in ids},
        engine_order=[m.metadata.get("dia_id") for m in result.memories],
        rerank_seconds=result.trace.stages.get("rerank", 0.0),
        reranker=outcome.reranker,
    )


def adaptive_depth(q: Captured, first: int, then: int, confident: float) -> int:
    """How many pairs the adaptive rule scores: ``then`` when none of the first ``first``
    scored ``confident`` or more, else ``first``."""
    _, scored, _ = rerank_head(q.head, first, q.scoring.get("prerank"), q.window)
    best = max((q.scores[c.id] for c in scored), default=0.0)
    return first if best >= confident else then


def adaptive_table(questions: Sequence[Captured], max_depth: int) -> str:
    lines = [
        "| first | then | go on below | R@10 | stop at first | mean pairs |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for first in ADAPTIVE_FIRST:
        for then in (t for t in ADAPTIVE_THEN if first < t <= max_depth):
            for confident in ADAPTIVE_CONFIDENT:
                depths = [adaptive_depth(q, first, then, confident) for q in questions]
                recall = statistics.mean(
                    recall_at_k(q.evidence_ids, replay(q, d), 10)
                    for q, d in zip(questions, depths, strict=True)
                )
                stopped = sum(d == first for d in depths) / len(depths)
                lines.append(
                    f"| {first} | {then} | {confident} | {recall:.3f} | {stopped:.0%} | "
                    f"{statistics.mean(depths):.1f} |"
                )
    if len(lines) == 2:
        return f"(none: every `then` of the grid, {ADAPTIVE_THEN}, is past --max-depth)"
    return "\n".join(lines)


def _recalls(questions: Sequence[Captured], ranked: Sequence[list[str | None]]) -> list[float]:
    return [
        statistics.mean(
            recall_at_k(q.evidence_ids, r, k) for q, r in zip(questions, ranked, strict=True)
        )
        for k in KS
    ]


def table(halves: Sequence[Sequence[Captured]], max_depth: int, per_pair_ms: float) -> str:
    """Recall@k of every (keep, depth) that fits ``max_depth``, for each half."""
    header = " | ".join(f"{half} R@{k}" for half in ("choose", "confirm") for k in KS)
    lines = [
        f"| keep | depth | {header} | oracle R@10 | rerank ms (est.) |",
        "|---:|---:|" + "---:|" * (2 * len(KS) + 2),
    ]
    for keep in KEEPS:
        for d in (d for d in DEPTHS if keep + d <= max_depth):
            cells: list[float] = []
            for half in halves:
                cells += _recalls(half, [replay(q, d, keep) for q in half])
            every = [q for half in halves for q in half]
            oracle = (
                f"{statistics.mean(oracle_at_10(q, d) for q in every):.3f}" if keep == 0 else ""
            )
            lines.append(
                f"| {keep} | {d} | "
                + " | ".join(f"{v:.3f}" for v in cells)
                + f" | {oracle} | {d * per_pair_ms:.0f} |"
            )
    return "\n".join(lines)


def same_top_ten(
    asked: Sequence[tuple[Any, Any]], captured: Sequence[Captured], settings: Settings
) -> str:
    """The engine itself at the defaults' keep and mid depth, against the replay of the same
    setting. The model scores every pair alone, so the two top 10s must be the same on every
    question, in the same order; a difference means the replay no longer recomputes what the
    engine does, and the run stops."""
    default = Settings()
    keep, depth = default.reranker_keep, default.reranker_depth_mid
    defaults = settings.model_copy(update={"reranker_keep": keep, "reranker_depth_mid": depth})
    differing = 0
    with MemoryEngine(settings=defaults) as engine:
        for (b, question), q in zip(asked, captured, strict=True):
            found = engine.recall(
                EVAL_BANK_PREFIX + b.bank,
                question.question,
                query_timestamp=question.query_time,
                max_tokens=EVAL_MAX_TOKENS,
            )
            mine = [m.metadata.get("dia_id") for m in found.memories[:10]]
            differing += mine != replay(q, depth, keep)[:10]
    if differing:
        raise SystemExit(
            f"at keep {keep} and depth {depth} the engine's top 10 differs from the replay's "
            f"on {differing} of {len(captured)} questions"
        )
    return (
        f"Asked again with keep {keep} and depth {depth}, the engine's top 10 is the "
        f"replay's, in the same order, on all {len(captured)} questions checked."
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--dataset",
        type=Path,
        default=os.environ.get(LOCOMO_VARIABLE),
        help=f"LoCoMo folder (default: ${LOCOMO_VARIABLE})",
    )
    parser.add_argument(
        "--choose",
        nargs="+",
        metavar="BANK",
        help=f"the conversations defaults are chosen on (default: the first {CHOOSE_DEFAULT})",
    )
    parser.add_argument("--limit", type=int, help="questions per conversation")
    parser.add_argument("--max-depth", type=int, default=max(DEPTHS))
    parser.add_argument("--out", type=Path, help="also write the Markdown table here")
    parser.add_argument(
        "--check",
        type=int,
        default=100,
        help="questions asked again with the defaults' keep and mid depth, whose top 10 is "
        "compared with the replay's (default: 100)",
    )
    parser.add_argument(
        "--late-interaction",
        choices=["on", "off"],
        default="on",
        help="the cross-encoder's head by late interaction (default) or by direct rank",
    )
    parser.add_argument(
        "--date-form",
        choices=DATE_FORMS,
        default="full",
        help="how the cross-encoder's documents carry their date (default: the engine's)",
    )
    args = parser.parse_args(argv)
    if args.dataset is None:
        parser.error(
            f"no LoCoMo folder: give --dataset DIR or set {LOCOMO_VARIABLE} (the LoCoMo data is "
            "CC BY-NC and not part of the repository)"
        )

    dataset = load_dataset(args.dataset)
    names = [b.bank for b in dataset.banks]
    choose = set(args.choose or names[:CHOOSE_DEFAULT])
    settings = Settings(
        reranker_provider="onnx",
        reranker_depth_mid=args.max_depth,
        reranker_keep=0,
        reranker_timeout=3600,
        late_interaction=args.late_interaction == "on",
    )
    asked = [
        (b, q)
        for b in dataset.banks
        for q in b.questions[: args.limit]
        if q.evidence and q.category_name != ADVERSARIAL_NAME
    ]
    with date_form(args.date_form), MemoryEngine(settings=settings) as engine:
        captured = [
            capture(engine, EVAL_BANK_PREFIX + b.bank, q)
            for b, q in tqdm(asked, unit="question", desc="recall at max depth")
        ]
    mismatched = sum(replay(q, args.max_depth)[:50] != q.engine_order[:50] for q in captured)
    if mismatched:
        raise SystemExit(f"replay differs from the engine on {mismatched} questions")
    per_pair = statistics.median(q.rerank_seconds / len(q.scores) for q in captured if q.scores)
    with date_form(args.date_form):
        check = same_top_ten(asked[: args.check], captured[: args.check], settings)
    halves = [
        [q for q in captured if (q.bank.removeprefix(EVAL_BANK_PREFIX) in choose) == half]
        for half in (True, False)
    ]
    command = " ".join([".venv/bin/python benchmarks/depth_replay.py", *(argv or sys.argv[1:])])
    report = (
        f"`{command}`\n\n"
        f"{len(captured)} non-adversarial questions ({len(halves[0])} of "
        f"{', '.join(sorted(choose))}, the conversations chosen on; {len(halves[1])} of the "
        f"others); replay at depth {args.max_depth} matches the engine on all of them; "
        f"cross-encoder {per_pair * 1000:.1f} ms per pair (median), documents dated in "
        f"the `{args.date_form}` form. *keep* candidates of "
        "the late-interaction order keep their places, the next *depth* are scored. "
        f"{check}\n\n"
        + table(halves, args.max_depth, per_pair * 1000)
        + "\n\nAdaptive depth, nothing kept (score `first` pairs; score up to `then` only "
        "when the best normalised score so far is below `go on below`), both halves:\n\n"
        + adaptive_table(captured, args.max_depth)
    )
    print(report)
    if args.out:
        args.out.write_text(report + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

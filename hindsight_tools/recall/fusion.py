"""Merging the arms' ranked lists (docs/design.md, Fusion). Pure functions; inputs are never
modified."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hindsight_tools.recall.arms.base import ARM_ORDER, ArmName, ArmResult

RRF_K = 60


@dataclass(frozen=True)
class FusedCandidate:
    """A candidate after fusion: its RRF score, its rank in each arm and each arm's score."""

    id: str
    rrf: float
    source_ranks: dict[ArmName, int] = field(default_factory=dict)
    arm_scores: dict[ArmName, float] = field(default_factory=dict)


def _in_arm_order(results: Sequence[ArmResult]) -> list[ArmResult]:
    return sorted(results, key=lambda r: ARM_ORDER.index(r.arm))


def reciprocal_rank_fusion(results: Sequence[ArmResult], k: int = RRF_K) -> list[FusedCandidate]:
    """``rrf(d) = Σ 1 / (k + rank_i(d))`` over the arms that returned ``d``; best first.

    Ties keep the order in which candidates were first met, arms taken in the fixed order
    semantic, bm25, graph, temporal — so the result is deterministic.
    """
    scores: dict[str, float] = {}
    ranks: dict[str, dict[ArmName, int]] = {}
    arm_scores: dict[str, dict[ArmName, float]] = {}
    for result in _in_arm_order(results):
        for hit in result.hits:
            scores[hit.id] = scores.get(hit.id, 0.0) + 1.0 / (k + hit.rank)
            ranks.setdefault(hit.id, {})[result.arm] = hit.rank
            arm_scores.setdefault(hit.id, {})[result.arm] = hit.score
    first_seen = {doc_id: n for n, doc_id in enumerate(scores)}
    order = sorted(scores, key=lambda d: (-scores[d], first_seen[d]))
    return [FusedCandidate(d, scores[d], ranks[d], arm_scores[d]) for d in order]


def cap_per_source(result: ArmResult, cap: int) -> ArmResult:
    """The arm's first ``cap`` hits (``cap <= 0``: unchanged)."""
    if cap <= 0 or len(result.hits) <= cap:
        return result
    return ArmResult(arm=result.arm, hits=result.hits[:cap], seconds=result.seconds)


def interleave_fusion(results: Sequence[ArmResult]) -> list[FusedCandidate]:
    """Every arm's #1, then every #2, …, skipping ids already taken (arms in fixed order)."""
    ordered = _in_arm_order(results)
    taken: dict[str, FusedCandidate] = {}
    depth = max((len(r.hits) for r in ordered), default=0)
    for position in range(depth):
        for result in ordered:
            if position >= len(result.hits):
                continue
            hit = result.hits[position]
            if hit.id not in taken:
                taken[hit.id] = FusedCandidate(hit.id, 0.0, {}, {})
            taken[hit.id].source_ranks[result.arm] = hit.rank
            taken[hit.id].arm_scores[result.arm] = hit.score
    n = len(taken)
    # A synthetic descending score keeps the "higher is better" contract of rrf.
    return [
        FusedCandidate(c.id, (n - i) / n, c.source_ranks, c.arm_scores)
        for i, c in enumerate(taken.values())
    ]

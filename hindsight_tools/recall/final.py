"""The final order: reranker scores, boosts, and the unscored tail (SPEC §7–§8)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from hindsight_tools.recall.fusion import FusedCandidate
from hindsight_tools.recall.rerank import PassthroughReranker, RerankOutcome, passthrough_scores
from hindsight_tools.recall.scoring import (
    RELEVANCE_FLOOR,
    Evidence,
    ScoringWeights,
    combined_scores,
    relevance_scale,
)
from hindsight_tools.temporal import TimeWindow

# The unscored tail sits just under the lowest scored candidate, never level with it.
_TAIL_GAP = 0.99


# The arms that match the query itself; graph and temporal expand from their hits.
DIRECT_ARMS = ("semantic", "bm25")
_UNRANKED = 1 << 30


def rerank_head(
    fused: Sequence[FusedCandidate], depth: int
) -> tuple[list[FusedCandidate], list[FusedCandidate]]:
    """Splits the fused list into the ``depth`` candidates a cross-encoder scores and the
    rest (in fused order).

    The head is taken by each candidate's best rank in a direct arm (semantic or BM25),
    fused order breaking ties: both arms' #1, then both #2s, … — so a memory only one of
    them finds, but finds first, still reaches the cross-encoder. Candidates only the
    graph or temporal arm found come after, in fused order. On the LoCoMo dev slice of the
    eval (298 questions, cross-encoder scores replayed offline) recall@10 at depth 24 was
    0.593 with the top 24 by RRF, 0.637 by best rank in any of the four arms, and 0.657 by
    best rank in a direct arm: the expansion arms' first ranks are less often the answer,
    and spent a third of the head.
    """
    if depth >= len(fused):
        return list(fused), []
    position = {c.id: i for i, c in enumerate(fused)}

    def best_direct_rank(c: FusedCandidate) -> tuple[int, int]:
        ranks = [rank for arm, rank in c.source_ranks.items() if arm in DIRECT_ARMS]
        return (min(ranks, default=_UNRANKED), position[c.id])

    chosen = {c.id for c in sorted(fused, key=best_direct_rank)[:depth]}
    head = [c for c in fused if c.id in chosen]
    return head, [c for c in fused if c.id not in chosen]


def fused_relevance(rrf: Sequence[float]) -> list[float]:
    """Without a cross-encoder, relevance is the fused score itself, min-max onto [0.1, 1].

    The passthrough scores of SPEC §7 spread evenly by rank: over 300 candidates one rank
    is 0.3% apart, so the ±27% boosts re-sort the whole list by date (on the dev set
    recall@10 fell from 0.50 to 0.32). Spread by RRF value, a memory two arms agree on
    stays well above one only a single arm found, and boosts reorder only near-ties.
    """
    if not rrf:
        return []
    low, high = min(rrf), max(rrf)
    if high - low <= 0:
        return [1.0] * len(rrf)
    return [RELEVANCE_FLOOR + (1.0 - RELEVANCE_FLOOR) * (r - low) / (high - low) for r in rrf]


@dataclass(frozen=True)
class RankedCandidate:
    candidate: FusedCandidate
    final: float
    cross_encoder: float | None


def rank_final(
    head: Sequence[FusedCandidate],
    outcome: RerankOutcome,
    evidence: Sequence[Evidence],
    *,
    now: datetime,
    window: TimeWindow | None,
    weights: ScoringWeights,
) -> list[RankedCandidate]:
    """Best first. The first ``len(outcome.scores)`` candidates are boosted and sorted;
    candidates the reranker didn't reach (depth or deadline) follow in fused (RRF) order."""
    n = len(outcome.scores)
    passthrough = outcome.reranker == PassthroughReranker.name
    relevance = (
        fused_relevance([c.rrf for c in head[:n]])
        if passthrough
        else relevance_scale(outcome.scores)
    )
    boosted = combined_scores(relevance, evidence[:n], now=now, window=window, weights=weights)
    scored = sorted(
        (
            RankedCandidate(c, b.final, None if passthrough else ce)
            for c, b, ce in zip(head[:n], boosted, outcome.scores, strict=True)
        ),
        key=lambda r: -r.final,
    )
    tail = sorted(head[n:], key=lambda c: -c.rrf)  # stable: fused order survives ties
    ceiling = scored[-1].final * _TAIL_GAP if scored else 1.0
    return scored + [
        RankedCandidate(c, ceiling * p, None)
        for c, p in zip(tail, passthrough_scores(len(tail)), strict=True)
    ]

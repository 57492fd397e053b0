"""The final order: reranker scores, boosts, and the unscored tail (SPEC §7–§8)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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


def direct_rank(candidate: FusedCandidate) -> int:
    """The candidate's best rank in a direct arm (semantic or BM25); huge if only the graph
    or temporal arm found it."""
    ranks = [rank for arm, rank in candidate.source_ranks.items() if arm in DIRECT_ARMS]
    return min(ranks, default=_UNRANKED)


def rerank_head(
    fused: Sequence[FusedCandidate], depth: int, prerank: Mapping[str, float] | None = None
) -> tuple[list[FusedCandidate], list[FusedCandidate]]:
    """Splits the fused list into the ``depth`` candidates a cross-encoder scores and the
    rest (in fused order).

    The head is taken by :func:`direct_rank`, fused order breaking ties: both arms' #1,
    then both #2s, … — so a memory only one of them finds, but finds first, still reaches
    the cross-encoder. Candidates only the graph or temporal arm found come after, in
    fused order. On the LoCoMo dev slice of the eval (298 questions, cross-encoder scores
    replayed offline) recall@10 at depth 24 was 0.593 with the top 24 by RRF, 0.637 by
    best rank in any of the four arms, and 0.657 by best rank in a direct arm: the
    expansion arms' first ranks are less often the answer, and spent a third of the head.

    With ``prerank`` (late-interaction scores by id) both parts follow it instead, best
    first, fused order breaking ties: it ranks the whole list better than any arm's order.
    """
    if prerank is not None:
        position = {c.id: i for i, c in enumerate(fused)}
        ordered = sorted(fused, key=lambda c: (-prerank.get(c.id, -math.inf), position[c.id]))
        return ordered[:depth], ordered[depth:]
    if depth >= len(fused):
        return list(fused), []
    position = {c.id: i for i, c in enumerate(fused)}
    chosen = {c.id for c in sorted(fused, key=lambda c: (direct_rank(c), position[c.id]))[:depth]}
    head = [c for c in fused if c.id in chosen]
    return head, [c for c in fused if c.id not in chosen]


def spread_relevance(values: Sequence[float]) -> list[float]:
    """``values`` min-max onto [0.1, 1], the range the boosts expect."""
    if not values:
        return []
    low, high = min(values), max(values)
    if high - low <= 0:
        return [1.0] * len(values)
    return [RELEVANCE_FLOOR + (1.0 - RELEVANCE_FLOOR) * (v - low) / (high - low) for v in values]


def passthrough_relevance(candidates: Sequence[FusedCandidate]) -> list[float]:
    """Without a cross-encoder, relevance is ``1 / direct_rank``, spread onto [0.1, 1].

    It orders the way :func:`rerank_head` picks a head, and for the same reason: RRF's
    equal votes lift what the graph and temporal arms found above the direct arms' own
    first hits. Both arms' #1 score 1.0, both #2s 0.55, and so on down a 1/rank curve,
    so the ±27% boosts reorder only near-ties and the deep tail; candidates no direct arm
    found sit at the floor, where the boosts (date, proof count) and then fused order
    decide. SPEC §7's passthrough scores, spread evenly by rank, are 0.3% apart over 300
    candidates and let the boosts re-sort everything by date. On the eval's dev slice
    (298 questions) recall@10 was 0.324 with those, 0.430 with the fused score spread by
    value, and 0.585 with this; on the full dev set 0.508 → 0.655 (README, quality).
    """
    return spread_relevance([1.0 / direct_rank(c) for c in candidates])


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
    prerank: Mapping[str, float] | None = None,
) -> list[RankedCandidate]:
    """Best first. The first ``len(outcome.scores)`` candidates are boosted and sorted;
    candidates the reranker didn't reach (depth or deadline) follow in the order given.
    Without a cross-encoder, relevance is the late-interaction score when there is one
    (spread onto [0.1, 1]), else :func:`passthrough_relevance`."""
    n = len(outcome.scores)
    passthrough = outcome.reranker == PassthroughReranker.name
    if passthrough and prerank is not None:
        floor = min(prerank.values(), default=0.0)
        relevance = spread_relevance([prerank.get(c.id, floor) for c in head[:n]])
    elif passthrough:
        relevance = passthrough_relevance(head[:n])
    else:
        relevance = relevance_scale(outcome.scores)
    boosted = combined_scores(relevance, evidence[:n], now=now, window=window, weights=weights)
    scored = sorted(
        (
            RankedCandidate(c, b.final, None if passthrough else ce)
            for c, b, ce in zip(head[:n], boosted, outcome.scores, strict=True)
        ),
        key=lambda r: -r.final,
    )
    # The tail keeps the late-interaction order it came in; without one, direct ranks
    # (stable: fused order breaks ties).
    tail = list(head[n:]) if prerank is not None else sorted(head[n:], key=direct_rank)
    ceiling = scored[-1].final * _TAIL_GAP if scored else 1.0
    return scored + [
        RankedCandidate(c, ceiling * p, None)
        for c, p in zip(tail, passthrough_scores(len(tail)), strict=True)
    ]

"""The final order: reranker scores, boosts, and the unscored tail (docs/design.md, Rerank and
Scoring)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from hindsight_tools.query.time_window import TimeWindow
from hindsight_tools.recall.fusion import FusedCandidate
from hindsight_tools.recall.rerank.base import (
    PassthroughReranker,
    RerankOutcome,
    passthrough_scores,
)
from hindsight_tools.recall.scoring import (
    RELEVANCE_FLOOR,
    Evidence,
    ScoringWeights,
    combined_scores,
    relevance_scale,
)

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


def candidate_order(
    fused: Sequence[FusedCandidate],
    prerank: Mapping[str, float] | None = None,
    window: Mapping[str, float] | None = None,
) -> list[FusedCandidate]:
    """The order the cross-encoder's head is cut from and the unscored tail keeps: by
    late-interaction score (``prerank``), else by :func:`direct_rank`, fused order breaking
    ties; each first scaled by the candidate's ``window`` weight
    (:func:`~hindsight_tools.recall.scoring.window_weight`), so that when the question names
    a period, its memories lead.

    Why not RRF's own order: MaxSim ranks the whole list better than any arm's order or
    their fusion. Replayed on the LoCoMo dev conversations (cross-encoder scores captured
    once, benchmarks/families.py for the questions), recall@10 at depth 6 was 0.788 / 0.744
    (the three conversations defaults are chosen on / the other two) by MaxSim, 0.741 /
    0.715 taking turns between RRF's order and MaxSim's, 0.751 / 0.726 giving RRF every
    third seat. The agreement of the arms gets its seat in :func:`rerank_head` instead.
    """
    position = {c.id: i for i, c in enumerate(fused)}

    def weight(c: FusedCandidate) -> float:
        return 1.0 if window is None else window.get(c.id, 1.0)

    if prerank is not None:
        return sorted(
            fused, key=lambda c: (-prerank.get(c.id, -math.inf) * weight(c), position[c.id])
        )
    return sorted(fused, key=lambda c: (direct_rank(c) / weight(c), position[c.id]))


# Two arms that both put a memory in their top three agree on it.
AGREEMENT_RANK = 3
AGREEMENT_ARMS = 2


def agreed(candidate: FusedCandidate) -> bool:
    """At least :data:`AGREEMENT_ARMS` arms rank the candidate in their top
    :data:`AGREEMENT_RANK`."""
    high = sum(1 for rank in candidate.source_ranks.values() if rank <= AGREEMENT_RANK)
    return high >= AGREEMENT_ARMS


def rerank_head(
    fused: Sequence[FusedCandidate],
    depth: int,
    prerank: Mapping[str, float] | None = None,
    window: Mapping[str, float] | None = None,
) -> tuple[list[FusedCandidate], list[FusedCandidate]]:
    """:func:`candidate_order` split into the ``depth`` candidates a cross-encoder scores
    and the rest, in that order, with one seat kept for the arms' agreement.

    When the best candidate that several arms rank high (:func:`agreed`) would fall outside
    the head, it takes the head's last seat: a memory that the temporal, semantic and BM25
    arms all put first reaches the cross-encoder however MaxSim ranks it. In the replay of
    :func:`candidate_order` this moved recall@10 from 0.763 to 0.772 on the conversations it
    was chosen on and from 0.741 to 0.742 on the others, with the window at full weight.
    """
    ordered = candidate_order(fused, prerank, window)
    head, rest = ordered[:depth], ordered[depth:]
    if depth >= 2 and not any(agreed(c) for c in head):
        seat = next((c for c in rest if agreed(c)), None)
        if seat is not None:
            head = [*head[:-1], seat]
            seated = {c.id for c in head}
            rest = [c for c in ordered if c.id not in seated]
    return head, rest


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
    decide. The reference's passthrough scores, spread evenly by rank, are 0.3% apart over 300
    candidates and let the boosts re-sort everything by date. On the eval's dev slice
    (298 questions) recall@10 was 0.324 with those, 0.430 with the fused score spread by
    value, and 0.585 with this; on the full dev set 0.508 → 0.655
    (docs/decisions/2026-12-02-passthrough-by-direct-rank.md).
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
    tail = list(head[n:])  # in candidate_order, as it came
    ceiling = scored[-1].final * _TAIL_GAP if scored else 1.0
    return scored + [
        RankedCandidate(c, ceiling * p, None)
        for c, p in zip(tail, passthrough_scores(len(tail)), strict=True)
    ]

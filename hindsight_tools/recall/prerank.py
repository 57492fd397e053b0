"""The final order: reranker scores, boosts, and the unscored tail (docs/design.md, Rerank and
Scoring)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

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

# One step between bands and places: the unscored tail sits this much under the lowest
# scored candidate, never level with it, and each kept candidate this much above the next.
SCORE_STEP = 0.99


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


def with_reading_in_context(
    own: Mapping[str, float], in_context: Mapping[str, float]
) -> dict[str, float]:
    """Each memory's late-interaction score: the mean of its own reading's and its reading
    after the memory before it in its document (``in_context``), where it has that one;
    its own alone elsewhere.

    Why both: read in context, a turn that answers a question asked just before it
    ("I've had them for three years now") matches the question about it, and single-fact
    questions gain; read in context alone, the turns next to the ones that name what a
    question asks about crowd those out, and questions whose answer is several such
    memories lose. The two together measured ahead of either on both halves of the LoCoMo
    dev conversations
    (docs/decisions/2026-12-07-memories-read-in-their-conversation.md)."""
    return {
        memory_id: score if memory_id not in in_context else (score + in_context[memory_id]) / 2
        for memory_id, score in own.items()
    }


# About the text of the 128 tokens late interaction scores: a memory up to this long keeps its
# score whole.
LENGTH_FREE_CHARS = 512


def length_prior(
    scores: Mapping[str, float], lengths: Mapping[str, int], weight: float
) -> dict[str, float]:
    """``scores`` less ``weight`` × ln(length / :data:`LENGTH_FREE_CHARS`) for each memory
    longer than that (``lengths`` in characters).

    Why: late interaction scores a long memory's first 128 tokens, so it matches more of a
    question's tokens than a short memory can with its twenty, whatever each says; and a
    long memory covers many things, so any one question is less likely about it, which is
    why BM25 normalises its scores for length. In long user-assistant chats the assistant's
    long answers crowd out the user's short messages that state what the question asks
    about. Memories up to the free length, every turn of a chat of short messages, keep
    their scores: their order is as without the prior."""
    return {
        memory_id: score
        - weight * math.log(max(lengths.get(memory_id, 0), LENGTH_FREE_CHARS) / LENGTH_FREE_CHARS)
        for memory_id, score in scores.items()
    }


# Two arms that both put a memory in their top three agree on it.
AGREEMENT_RANK = 3
AGREEMENT_ARMS = 2


def agreed(candidate: FusedCandidate) -> bool:
    """At least :data:`AGREEMENT_ARMS` arms rank the candidate in their top
    :data:`AGREEMENT_RANK`."""
    high = sum(1 for rank in candidate.source_ranks.values() if rank <= AGREEMENT_RANK)
    return high >= AGREEMENT_ARMS


def kept_places(
    keep: int,
    *,
    prerank: Mapping[str, float] | None,
    window: TimeWindow | None,
    cross_encoder: bool,
) -> int:
    """How many of the candidate order's first candidates keep their places above the
    cross-encoder's (``keep``, the setting), and when none do.

    None without late interaction's order (the order by direct rank is much weaker) or
    without a cross-encoder (passthrough scores every candidate alike). None either when the
    question names a period: the order is then MaxSim × the window's weight, two signals in
    one product, and the period's memories that match only its time lead it. "What was
    Priya's favourite dish in summer 2023?" puts her three summer-2023 memories over the
    undated one about her favourite dish; the cross-encoder, reading the question and each
    memory, is what puts that one first.
    """
    if prerank is None or window is not None or not cross_encoder:
        return 0
    return keep


class Head(NamedTuple):
    """A candidate order cut for the cross-encoder: what keeps its place, what it scores,
    and the unscored rest, each in :func:`candidate_order`."""

    kept: list[FusedCandidate]
    scored: list[FusedCandidate]
    rest: list[FusedCandidate]


def rerank_head(
    fused: Sequence[FusedCandidate],
    depth: int,
    prerank: Mapping[str, float] | None = None,
    window: Mapping[str, float] | None = None,
    keep: int = 0,
) -> Head:
    """:func:`candidate_order` cut into its first ``keep`` candidates, which keep their
    places, the next ``depth``, which a cross-encoder scores, and the rest; one seat is kept
    for the arms' agreement.

    Why keep any: with late interaction, MaxSim's first candidates are seldom wrong, and a
    cross-encoder that reads them mostly reorders memories the caller gets anyway, and now
    and then pushes one of them out. Its pairs count for more on the next candidates, at the
    edge of what a caller reads: there it decides which ones come in
    (docs/decisions/2026-12-05-cross-encoder-reads-the-edge.md).

    When the best candidate that several arms rank high (:func:`agreed`) would fall outside
    both, it takes the scored band's last seat: a memory that the temporal, semantic and
    BM25 arms all put first reaches the cross-encoder however MaxSim ranks it. In the replay
    of :func:`candidate_order` this moved recall@10 from 0.763 to 0.772 on the conversations
    it was chosen on and from 0.741 to 0.742 on the others, with the window at full weight
    and nothing kept.
    """
    ordered = candidate_order(fused, prerank, window)
    keep = max(keep, 0)
    kept, scored, rest = ordered[:keep], ordered[keep : keep + depth], ordered[keep + depth :]
    if depth >= 2 and not any(agreed(c) for c in kept + scored):
        seat = next((c for c in rest if agreed(c)), None)
        if seat is not None:
            scored = [*scored[:-1], seat]
            seated = {c.id for c in kept + scored}
            rest = [c for c in ordered if c.id not in seated]
    return Head(kept, scored, rest)


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
    kept: bool = False


def rank_final(
    head: Sequence[FusedCandidate],
    outcome: RerankOutcome,
    evidence: Sequence[Evidence],
    *,
    now: datetime,
    window: TimeWindow | None,
    weights: ScoringWeights,
    prerank: Mapping[str, float] | None = None,
    kept: int = 0,
) -> list[RankedCandidate]:
    """Best first, in three bands: the first ``kept`` candidates (:func:`rerank_head`'s
    ``kept``), in the order given; then the next ``len(outcome.scores)``, boosted and sorted
    by the reranker's relevance; then the candidates the reranker didn't reach (depth or
    deadline), in the order given. Without a cross-encoder, relevance is the
    late-interaction score when there is one (spread onto [0.1, 1]), else
    :func:`passthrough_relevance`.

    The kept band keeps its places: its finals only rank it, each a step above the next and
    the last a step above the best scored one. Sorting it by boosted relevance instead,
    spread over a few near-equal MaxSim scores, stretched hundredths over the whole
    [0.1, 1] range."""
    n = len(outcome.scores)
    passthrough = outcome.reranker == PassthroughReranker.name
    reached = head[kept : kept + n]
    if passthrough:
        relevance = _late_relevance(reached, prerank)
    else:
        relevance = relevance_scale(outcome.scores)
    boosted = combined_scores(
        relevance, evidence[kept : kept + n], now=now, window=window, weights=weights
    )
    scored = sorted(
        (
            RankedCandidate(c, b.final, None if passthrough else ce)
            for c, b, ce in zip(reached, boosted, outcome.scores, strict=True)
        ),
        key=lambda r: -r.final,
    )
    best_scored = scored[0].final if scored else 1.0
    leading = [
        RankedCandidate(c, best_scored / SCORE_STEP ** (kept - i), None, kept=True)
        for i, c in enumerate(head[:kept])
    ]
    tail = list(head[kept + n :])  # in candidate_order, as it came
    ranked = leading + scored
    ceiling = ranked[-1].final * SCORE_STEP if ranked else 1.0
    return ranked + [
        RankedCandidate(c, ceiling * p, None)
        for c, p in zip(tail, passthrough_scores(len(tail)), strict=True)
    ]


def _late_relevance(
    candidates: Sequence[FusedCandidate], prerank: Mapping[str, float] | None
) -> list[float]:
    """The late-interaction scores of ``candidates`` spread onto [0.1, 1]; without them,
    :func:`passthrough_relevance`."""
    if prerank is None:
        return passthrough_relevance(candidates)
    floor = min(prerank.values(), default=0.0)
    return spread_relevance([prerank.get(c.id, floor) for c in candidates])

"""Combined scoring: relevance times the boosts and the query's time window.

``final = relevance × recency_boost × proof_boost × window_weight``. The two boosts are
gentle, ``1 + α·(signal − 0.5)``: multiplicative, so a boost moves a score in proportion to
its relevance and a barely relevant memory can't ride freshness past a relevant one.

The window weight is not gentle. When a question names a period ("last spring", "in May
2023") the memories of that period are what it asks for, so a memory inside the window
keeps its relevance and one outside loses up to ``temporal_alpha`` of it, more the further
out it lies. At the default 0.8 a memory far outside the window needs five times the
relevance of one inside to pass it: the window ranks, it never filters, so when nothing
inside matches, the rest still comes back. A ±10% boost, as the boost formula would give,
cannot lift a memory the cross-encoder put at 0.1 of the head's range over one at 0.8.
Everything here is pure: values in, new values out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from hindsight_tools.query.time_window import TimeWindow

RecencyFunction = Literal["linear", "exponential", "none"]

NEUTRAL = 0.5
RECENCY_FLOOR = 0.1
LINEAR_HORIZON_DAYS = 365.0
RELEVANCE_FLOOR = 0.1
# A memory this many days (or one window length, if longer) outside the window has fallen
# to the window's floor; nearer ones are partly forgiven, since a date said in passing
# ("early June" told on May 30) often lands just beside the period.
WINDOW_FALLOFF_DAYS = 7.0
# logit() of a score at exactly 0 or 1 would be infinite
_EPSILON = 1e-6


@dataclass(frozen=True)
class ScoringWeights:
    recency_alpha: float = 0.2
    temporal_alpha: float = 0.8
    proof_alpha: float = 0.1
    recency: RecencyFunction = "linear"
    half_life_days: float = 90.0


@dataclass(frozen=True)
class Evidence:
    """What the boosts look at for one memory."""

    date: datetime | None
    proof_count: int = 1
    # The end of the memory's span when it has one (occurred_start..occurred_end).
    end: datetime | None = None
    # The period the memory's own words name, resolved against its date ("last year we
    # went camping", said in 2023, is about 2022); see hindsight_tools.recall.periods.
    named: TimeWindow | None = None


@dataclass(frozen=True)
class Boosted:
    final: float
    recency: float
    temporal: float
    proof: float


def boost(alpha: float, signal: float) -> float:
    return 1.0 + alpha * (signal - NEUTRAL)


def recency_signal(
    date: datetime | None, now: datetime, function: RecencyFunction, half_life_days: float
) -> float:
    """1.0 today; linear: 0.5 at half a year, floor 0.1 from a year; exponential: halves
    every ``half_life_days``. Undated, or ``function="none"``: neutral 0.5. A date after
    ``now`` counts as today."""
    if date is None or function == "none":
        return NEUTRAL
    days = max((now - date) / timedelta(days=1), 0.0)
    if function == "exponential":
        return max(float(0.5 ** (days / half_life_days)), RECENCY_FLOOR)
    return min(max(1.0 - days / LINEAR_HORIZON_DAYS, RECENCY_FLOOR), 1.0)


def temporal_signal(evidence: Evidence, window: TimeWindow | None) -> float:
    """1.0 when the memory's time overlaps the window, falling linearly to 0.0 over
    :data:`WINDOW_FALLOFF_DAYS` or one window length (the longer) outside it; neutral 0.5
    without a window or a date. The whole window counts alike: a question about "summer
    2023" asks for June as much as for mid-July. A memory whose words name a period
    (``evidence.named``) counts as of that period too, whichever is nearer."""
    if window is None or evidence.date is None:
        return NEUTRAL
    signal = _span_signal(evidence.date, evidence.end or evidence.date, window)
    if evidence.named is not None and signal < 1.0:
        signal = max(signal, _named_signal(evidence.named, window))
    return signal


def _named_signal(named: TimeWindow, window: TimeWindow) -> float:
    """The share of a period the memory's words name that lies inside the window.

    No falloff here, unlike a date: "the summer", named in May, is about June to August, so
    it answers a question about July only in part (a third), and "last month" said on July
    3rd is about June, not about the July beside it. A period open on one side is too vague
    to place anything."""
    if named.start is None or named.end is None:
        return 0.0
    low = named.start if window.start is None else max(named.start, window.start)
    high = named.end if window.end is None else min(named.end, window.end)
    if high < low:
        return 0.0
    length = (named.end - named.start).total_seconds()
    return 1.0 if length <= 0 else min((high - low).total_seconds() / length, 1.0)


def _span_signal(start: datetime, end: datetime, window: TimeWindow) -> float:
    end = max(end, start)
    if window.end is not None and start > window.end:
        gap = start - window.end
    elif window.start is not None and end < window.start:
        gap = window.start - end
    else:
        return 1.0
    falloff = max(window.days() or 0.0, WINDOW_FALLOFF_DAYS)
    return max(1.0 - (gap / timedelta(days=1)) / falloff, 0.0)


def window_weight(alpha: float, signal: float) -> float:
    """The factor the window leaves a memory: 1 inside, down to ``1 − alpha`` far outside;
    an undated memory sits halfway."""
    return 1.0 - alpha * (1.0 - signal)


def proof_signal(proof_count: int) -> float:
    return min(max(0.5 + math.log(max(proof_count, 1)) / 10, 0.0), 1.0)


def relevance_scale(scores: Sequence[float]) -> list[float]:
    """Relevance put on the passthrough scale [0.1, 1.0], by value, before boosting.

    Min-max in logit space: a cross-encoder whose sigmoid saturates (0.9997 vs 0.982) or
    an API whose scores bunch (0.48 vs 0.52) still shows its judgement as a spread the
    ±27% boosts can't overturn, while near-ties stay near-ties. Equal scores → 1.0.
    """
    if not scores:
        return []
    logits = [_logit(s) for s in scores]
    low, high = min(logits), max(logits)
    if high - low < _EPSILON:
        return [1.0] * len(scores)
    span = 1.0 - RELEVANCE_FLOOR
    return [RELEVANCE_FLOOR + span * (x - low) / (high - low) for x in logits]


def combined_scores(
    relevance: Sequence[float],
    evidence: Sequence[Evidence],
    *,
    now: datetime,
    window: TimeWindow | None,
    weights: ScoringWeights,
) -> list[Boosted]:
    """One :class:`Boosted` per candidate, in input order (the caller sorts)."""
    boosted = []
    for score, item in zip(relevance, evidence, strict=True):
        recency = boost(
            weights.recency_alpha,
            recency_signal(item.date, now, weights.recency, weights.half_life_days),
        )
        temporal = (
            1.0
            if window is None
            else window_weight(weights.temporal_alpha, temporal_signal(item, window))
        )
        proof = boost(weights.proof_alpha, proof_signal(item.proof_count))
        boosted.append(Boosted(score * recency * temporal * proof, recency, temporal, proof))
    return boosted


def _logit(score: float) -> float:
    p = min(max(score, _EPSILON), 1.0 - _EPSILON)
    return math.log(p / (1.0 - p))

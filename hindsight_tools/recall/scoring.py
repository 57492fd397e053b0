"""Combined scoring (SPEC §8): relevance times three gentle boosts.

``final = relevance × recency_boost × temporal_boost × proof_boost`` with each
``boost = 1 + α·(signal − 0.5)``: multiplicative, so a boost moves a score in proportion
to its relevance and a barely relevant memory can't ride freshness past a relevant one.
Everything here is pure: values in, new values out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from hindsight_tools.temporal import TimeWindow

RecencyFunction = Literal["linear", "exponential", "none"]

NEUTRAL = 0.5
RECENCY_FLOOR = 0.1
LINEAR_HORIZON_DAYS = 365.0
RELEVANCE_FLOOR = 0.1
# logit() of a score at exactly 0 or 1 would be infinite
_EPSILON = 1e-6


@dataclass(frozen=True)
class ScoringWeights:
    recency_alpha: float = 0.2
    temporal_alpha: float = 0.2
    proof_alpha: float = 0.1
    recency: RecencyFunction = "linear"
    half_life_days: float = 90.0


@dataclass(frozen=True)
class Evidence:
    """What the boosts look at for one memory."""

    date: datetime | None
    proof_count: int = 1


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


def temporal_signal(date: datetime | None, window: TimeWindow | None) -> float:
    """1.0 at the window's centre falling to 0.0 at its edges; neutral without a window or
    a date. A half-open window ("since May") has no centre: inside 1.0, outside 0.0."""
    if window is None or date is None:
        return NEUTRAL
    centre, days = window.centre(), window.days()
    if centre is None or days is None:
        inside = (window.start is None or date >= window.start) and (
            window.end is None or date <= window.end
        )
        return 1.0 if inside else 0.0
    distance = abs(date - centre) / timedelta(days=1)
    return 1.0 - min(distance / (days / 2), 1.0)


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
        temporal = boost(weights.temporal_alpha, temporal_signal(item.date, window))
        proof = boost(weights.proof_alpha, proof_signal(item.proof_count))
        boosted.append(Boosted(score * recency * temporal * proof, recency, temporal, proof))
    return boosted


def _logit(score: float) -> float:
    p = min(max(score, _EPSILON), 1.0 - _EPSILON)
    return math.log(p / (1.0 - p))

"""What every retrieval arm returns: ranked hits with the arm's own score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ArmName = Literal["semantic", "bm25", "graph", "temporal"]
# One fixed order: fusion and traces list arms in this order.
ARM_ORDER: tuple[ArmName, ...] = ("semantic", "bm25", "graph", "temporal")


@dataclass(frozen=True)
class ArmHit:
    """One candidate from one arm; ``rank`` is 1-based within that arm."""

    id: str
    score: float
    rank: int


@dataclass(frozen=True)
class ArmResult:
    arm: ArmName
    hits: tuple[ArmHit, ...]
    seconds: float = 0.0


def ranked(arm: ArmName, scored: list[tuple[str, float]], seconds: float = 0.0) -> ArmResult:
    """Best score first (ties by id, so equal inputs give equal rankings), ranks from 1."""
    ordered = sorted(scored, key=lambda pair: (-pair[1], pair[0]))
    hits = tuple(ArmHit(id=i, score=s, rank=n) for n, (i, s) in enumerate(ordered, start=1))
    return ArmResult(arm=arm, hits=hits, seconds=seconds)

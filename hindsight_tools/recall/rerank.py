"""Rerankers score fused candidates against the query (SPEC §7).

Only the passthrough stage lives here for now; cross-encoders plug in behind the same
protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

PASSTHROUGH_MIN = 0.1
PASSTHROUGH_MAX = 1.0


class Reranker(Protocol):
    @property
    def name(self) -> str: ...

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """One score per document in [0, 1]; higher is more relevant."""
        ...


def passthrough_scores(count: int) -> list[float]:
    """Scores spread evenly over [0.1, 1.0] by fused rank: best 1.0, worst 0.1.

    Keeps the boosts meaningful when there is no cross-encoder, instead of leaving raw RRF
    values so close together that recency alone would decide the order.
    """
    if count <= 0:
        return []
    if count == 1:
        return [PASSTHROUGH_MAX]
    step = (PASSTHROUGH_MAX - PASSTHROUGH_MIN) / (count - 1)
    return [PASSTHROUGH_MAX - i * step for i in range(count)]


class PassthroughReranker:
    """Keeps the fused order; see :func:`passthrough_scores`."""

    name = "passthrough"

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        return passthrough_scores(len(documents))


def rerank_document(text: str, context: str | None, occurred_start: datetime | None) -> str:
    """The document a reranker sees: ``[Date: June 05, 2022 (2022-06-05)] {context}: {text}``.

    Each prefix only when its value is present.
    """
    document = f"{context}: {text}" if context else text
    if occurred_start is not None:
        date = f"{occurred_start:%B %d, %Y} ({occurred_start:%Y-%m-%d})"
        document = f"[Date: {date}] {document}"
    return document

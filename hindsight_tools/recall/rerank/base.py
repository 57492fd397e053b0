"""Reranking fused candidates against the query (docs/design.md, Rerank).

A :class:`Reranker` turns ``(query, document)`` pairs into raw scores; the providers live
in :mod:`hindsight_tools.recall.rerank.providers`. This module holds what every provider shares: the
document text, score normalisation, the passthrough stage, and :class:`RerankChain`,
which feeds a provider its candidates best-first in slices, fails over to the next
provider when one raises, and stops at a deadline so the unscored tail keeps its fused
order instead of the recall waiting.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

log = logging.getLogger(__name__)

PASSTHROUGH_MIN = 0.1
PASSTHROUGH_MAX = 1.0

# Inference runs here rather than on the caller's thread so a deadline can be kept even
# when one slice is slow, and rerankers never run on an event loop. One worker per core:
# more would only make concurrent recalls fight over the same cores.
_INFERENCE_POOL = ThreadPoolExecutor(
    max_workers=os.cpu_count() or 1, thread_name_prefix="hindsight-rerank"
)


@runtime_checkable
class Reranker(Protocol):
    """Scores ``(query, document)`` pairs; any real scale (logits or [0, 1])."""

    @property
    def name(self) -> str: ...

    @property
    def batch_size(self) -> int:
        """How many pairs one call should carry."""
        ...

    def score(self, query: str, documents: Sequence[str]) -> list[float]: ...


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
    """Keeps the fused order; see :func:`passthrough_scores`. Never fails."""

    name = "passthrough"
    batch_size = 1_000_000

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        return passthrough_scores(len(documents))


def normalise_scores(scores: Sequence[float]) -> list[float]:
    """A batch already within [0, 1] (a calibrated API) is kept; otherwise logits get a
    sigmoid. NaN scores 0 so one broken score can't poison the sort."""
    finite = [s for s in scores if not math.isnan(s)]
    calibrated = all(0.0 <= s <= 1.0 for s in finite)
    return [0.0 if math.isnan(s) else s if calibrated else _sigmoid(s) for s in scores]


def rerank_document(text: str, context: str | None, occurred_start: datetime | None) -> str:
    """The document a reranker sees: ``[Date: June 05, 2022 (2022-06-05)] {context}: {text}``.

    Each prefix only when its value is present.
    """
    document = f"{context}: {text}" if context else text
    if occurred_start is not None:
        date = f"{occurred_start:%B %d, %Y} ({occurred_start:%Y-%m-%d})"
        document = f"[Date: {date}] {document}"
    return document


@dataclass(frozen=True)
class RerankOutcome:
    """Normalised scores for the first ``len(scores)`` documents (the rest went unscored),
    who scored them, and which providers failed on the way."""

    scores: list[float]
    reranker: str
    failed: tuple[str, ...] = field(default_factory=tuple)
    timed_out: bool = False


class RerankChain:
    """Providers in failover order; the last is normally ``passthrough``."""

    def __init__(self, rerankers: Sequence[Reranker]) -> None:
        if not rerankers:
            raise ValueError("a RerankChain needs at least one reranker")
        self.rerankers = tuple(rerankers)

    @property
    def name(self) -> str:
        return self.rerankers[0].name

    @property
    def is_passthrough(self) -> bool:
        return isinstance(self.rerankers[0], PassthroughReranker)

    def rerank(
        self, query: str, documents: Sequence[str], *, timeout: float | None = None
    ) -> RerankOutcome:
        """Scores as many documents, best-first, as fit in ``timeout`` seconds."""
        if not documents:
            return RerankOutcome(scores=[], reranker=self.name)
        deadline = None if timeout is None else time.monotonic() + timeout
        failed: list[str] = []
        for reranker in self.rerankers:
            if isinstance(reranker, PassthroughReranker):
                return RerankOutcome(reranker.score(query, documents), reranker.name, tuple(failed))
            try:
                scores, timed_out = _score_until(reranker, query, documents, deadline)
            except Exception as exc:  # any provider failure degrades, never fails, a recall
                log.warning("reranker %s failed (%s); trying the next one", reranker.name, exc)
                failed.append(reranker.name)
                continue
            return RerankOutcome(scores, reranker.name, tuple(failed), timed_out)
        return RerankOutcome([], "none", tuple(failed))


def _score_until(
    reranker: Reranker, query: str, documents: Sequence[str], deadline: float | None
) -> tuple[list[float], bool]:
    """Slices in fused order until the deadline; a slice still running then is abandoned."""
    scores: list[float] = []
    size = max(reranker.batch_size, 1)
    for start in range(0, len(documents), size):
        piece = list(documents[start : start + size])
        future = _INFERENCE_POOL.submit(reranker.score, query, piece)
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            future.cancel()
            return normalise_scores(scores), True
        try:
            raw = future.result(timeout=remaining)
        except FutureTimeout:
            return normalise_scores(scores), True
        if len(raw) != len(piece):
            raise ValueError(f"{reranker.name} returned {len(raw)} scores for {len(piece)} pairs")
        scores.extend(float(s) for s in raw)
    return normalise_scores(scores), False


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)

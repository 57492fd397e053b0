"""Exact semantic link neighbours for an import, computed in the importing process.

Retain finds a memory's semantic neighbours in SQL: exactly in a small bank, through the
HNSW index in a larger one, one index walk per memory on the database's single backend.
An import knows the vectors of everything it writes, so while the bank is small enough to
hold in memory it keeps them as one normalised matrix and finds each batch's neighbours
with one matrix product. That runs beside the database writing the batch before, and the
links it finds are exact up to the size held, where past 2,000 memories the SQL path walks
the HNSW graph.

The neighbours are those of the SQL path: for each memory of a batch, the ``top_k`` most
similar other memories of the bank, the whole batch included, kept when their cosine
similarity is at least the threshold; the weight is that similarity, capped at 1. numpy's
matrix product is the library here; an approximate index library would give up the
exactness the matrix product keeps at these sizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hindsight_tools.encoders.embedding import Vectors

# Working memory of a batch's search: its similarity rows and their argpartition indexes
# (12 bytes a pair) are computed this many bytes at a time. A batch of 10,000 against a
# bank of 100,000 would otherwise take 12 GB.
_WORKING_BYTES = 64 * 2**20


@dataclass(frozen=True)
class SemanticLinks:
    """A batch's semantic links, and the bank size they assume before the batch (the write
    also checks that nobody else wrote to the bank; see ``retain.bulk``)."""

    bank_size: int
    from_ids: list[str]
    to_ids: list[str]
    weights: list[float]


class NeighbourIndex:
    """A bank's vectors held in memory during one import, up to ``capacity`` memories."""

    def __init__(
        self, ids: Sequence[str], vectors: Vectors, capacity: int, top_k: int, threshold: float
    ) -> None:
        self._capacity = capacity
        self._top_k = top_k
        self._threshold = threshold
        self._ids = list(ids)
        self._vectors = _normalised(vectors)
        self.full = len(ids) > capacity

    def __len__(self) -> int:
        return len(self._ids)

    def room_for(self, count: int) -> bool:
        """Whether ``count`` more memories still fit."""
        return not self.full and len(self._ids) + count <= self._capacity

    def add(self, ids: Sequence[str], vectors: Vectors) -> SemanticLinks | None:
        """Take a batch into the bank's vectors and return its links; None once the bank
        would pass the capacity (from then on the caller finds links in SQL)."""
        before = len(self._ids)
        if self.full or before + len(ids) > self._capacity:
            self.full = True
            self._vectors = np.empty((0, 0), dtype=np.float32)
            return None
        if not len(ids):
            return SemanticLinks(before, [], [], [])
        self._grow(before + len(ids), vectors.shape[1])
        self._vectors[before : before + len(ids)] = _normalised(vectors)
        self._ids.extend(ids)
        return self._links(before, len(ids))

    def _links(self, first: int, count: int) -> SemanticLinks:
        bank = self._vectors[: len(self._ids)]
        from_ids: list[str] = []
        to_ids: list[str] = []
        weights: list[float] = []
        keep = min(self._top_k, len(self._ids) - 1)
        if keep <= 0:
            return SemanticLinks(first, from_ids, to_ids, weights)
        step = max(16, _WORKING_BYTES // (12 * len(self._ids)))
        for start in range(first, first + count, step):
            stop = min(start + step, first + count)
            similarity = bank[start:stop] @ bank.T
            rows = np.arange(stop - start)
            similarity[rows, np.arange(start, stop)] = -np.inf  # not its own neighbour
            nearest = np.argpartition(similarity, -keep, axis=1)[:, -keep:]
            for row, columns in zip(rows, nearest, strict=True):
                values = similarity[row, columns]
                chosen = values >= self._threshold
                from_ids.extend([self._ids[start + row]] * int(chosen.sum()))
                to_ids.extend(self._ids[c] for c in columns[chosen])
                weights.extend(np.minimum(values[chosen], 1.0).tolist())
        return SemanticLinks(first, from_ids, to_ids, weights)

    def _grow(self, rows: int, dimension: int) -> None:
        """Room for ``rows`` vectors, doubling (up to the capacity) so that an import of n
        memories copies the matrix O(log n) times."""
        if self._vectors.shape[0] >= rows and self._vectors.shape[1] == dimension:
            return
        size = min(max(rows, 2 * self._vectors.shape[0], 1024), max(self._capacity, rows))
        grown = np.empty((size, dimension), dtype=np.float32)
        held = len(self._ids)
        if held:
            grown[:held] = self._vectors[:held]
        self._vectors = grown


def _normalised(vectors: Vectors) -> Vectors:
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.size == 0:
        return np.empty((0, 0), dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)

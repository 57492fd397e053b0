"""A batch's vectors: the embeddings callers brought, checked, and the ones left to encode.

An item with its own ``embedding`` (an import from another store) keeps it and gets no
late-interaction vectors here; the backfill gives it those later. Pure: the encoding itself
is the caller's blocking step.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hindsight_tools.encoders.embedding import Vectors
from hindsight_tools.errors import FieldProblem, InvalidRequestError
from hindsight_tools.models import MemoryItem

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_given_embeddings(
    items: Sequence[MemoryItem],
    dimension: int,
    model: str,
    stated_model: str | None = None,
    first_index: int = 0,
) -> None:
    """Raise naming each item whose embedding can't be this store's, and the model stated
    for the embeddings if it is another than the store's."""
    problems = []
    if stated_model is not None and stated_model != model:
        problems.append(
            FieldProblem(
                "embedding_model",
                f"{stated_model!r} made the given embeddings, but this store's memories are "
                f"embedded with {model!r}: vectors of two models can't be compared; leave the "
                "embeddings out to have them computed",
            )
        )
    for index, item in enumerate(items, start=first_index):
        if item.embedding is not None and len(item.embedding) != dimension:
            problems.append(
                FieldProblem(
                    f"items[{index}].embedding",
                    f"has {len(item.embedding)} numbers; this store's model {model!r} makes "
                    f"{dimension}-dimensional vectors",
                )
            )
        elif item.embedding is not None:
            # Stored as float32: what overflows or vanishes there is checked as stored.
            with np.errstate(over="ignore", under="ignore"):
                stored = np.asarray(item.embedding, dtype=np.float32)
            if not np.isfinite(stored).all():
                problems.append(
                    FieldProblem(
                        f"items[{index}].embedding",
                        f"has values beyond float32's range (±{_FLOAT32_MAX:.1e})",
                    )
                )
            elif not stored.any():
                problems.append(
                    FieldProblem(
                        f"items[{index}].embedding",
                        "is all zeros (as float32); a zero vector has no direction to compare "
                        "by cosine",
                    )
                )
    if problems:
        raise InvalidRequestError(problems)


def to_encode(items: Sequence[MemoryItem]) -> list[int]:
    """The positions of the items that brought no embedding."""
    return [i for i, item in enumerate(items) if item.embedding is None]


def merge_embeddings(
    items: Sequence[MemoryItem], encoded: Vectors, positions: Sequence[int], dimension: int
) -> Vectors:
    """One matrix in item order: the given embeddings, and ``encoded`` at ``positions``."""
    merged = np.empty((len(items), dimension), dtype=np.float32)
    for i, item in enumerate(items):
        if item.embedding is not None:
            merged[i] = item.embedding
    if positions:
        merged[list(positions)] = encoded
    return merged


def place_token_vectors(
    count: int, encoded: Sequence[bytes], positions: Sequence[int]
) -> list[bytes | None]:
    """Token vectors in item order, None for the items that brought their embedding."""
    placed: list[bytes | None] = [None] * count
    for position, vectors in zip(positions, encoded, strict=True):
        placed[position] = vectors
    return placed

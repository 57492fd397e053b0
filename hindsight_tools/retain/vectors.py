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


def check_given_embeddings(
    items: Sequence[MemoryItem],
    dimension: int,
    model: str,
    stated_model: str | None = None,
    first_index: int = 0,
) -> None:
    """Raise naming each item whose embedding can't be this store's, and the model stated
    for them if it is another than the store's."""
    problems = []
    if (
        stated_model is not None
        and stated_model != model
        and any(item.embedding is not None for item in items)
    ):
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
        elif item.embedding is not None and not any(item.embedding):
            problems.append(
                FieldProblem(
                    f"items[{index}].embedding",
                    "is all zeros; a zero vector has no direction to compare by cosine",
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

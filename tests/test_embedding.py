"""The packaged sentence-transformers embedder."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from hindsight_tools.embedding import SMALL_INPUT, default_embedder
from hindsight_tools.settings import DEFAULT_EMBEDDINGS_MODEL


def test_vectors_are_unit_length_and_similar_texts_are_close() -> None:
    embedder = default_embedder(DEFAULT_EMBEDDINGS_MODEL, 32)
    vectors = embedder.embed(["I adopted a cat", "I got a kitten", "The stock market fell"])
    assert vectors.shape == (3, embedder.dimension) and vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert embedder.embed([]).shape == (0, embedder.dimension)


def test_a_query_runs_on_one_thread_and_a_batch_on_all(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = default_embedder(DEFAULT_EMBEDDINGS_MODEL, 32)
    model = embedder._model
    seen: list[int] = []
    original = model.encode

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(torch.get_num_threads())
        return original(*args, **kwargs)

    monkeypatch.setattr(model, "encode", spy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        embedder.embed(["one query"])
        embedder.embed([f"memory {i}" for i in range(SMALL_INPUT + 1)])
        assert seen == [1, 2]
        assert torch.get_num_threads() == 2  # restored after the query
    finally:
        torch.set_num_threads(before)

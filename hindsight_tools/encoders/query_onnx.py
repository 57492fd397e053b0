"""The sentence-transformers model's transformer on onnxruntime, for queries.

A recall embeds one short question. In torch that costs ~15 ms on one core here, almost all
of it per-operator overhead rather than arithmetic; the same weights exported to ONNX run
in ~6 ms (``benchmarks/recall_bench.py`` reports the embed stage). Only the transformer
runs on onnxruntime: its token embeddings go back through the model's own pooling and
normalisation modules, so whatever pooling a model declares is applied by
sentence-transformers itself.

The library route, sentence-transformers' ``backend="onnx"``, needs ``optimum-onnx``, which
requires ``transformers<4.58``; this package runs on transformers 5. So the export is
``torch.onnx.export`` (TorchScript exporter), cached on disk per model and torch version.
The exporter needs the ``onnx`` package, the optional ``onnx`` extra; running a cached
export does not. An export that fails (``onnx`` missing included), or that does not
reproduce the torch vectors, leaves queries on torch.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hindsight_tools.encoders.onnx_session import cpu_session

log = logging.getLogger(__name__)

# Vectors of both paths must agree to this (max absolute difference of unit vectors);
# measured differences are ~1e-7, float32 rounding in a different operator order.
AGREEMENT = 1e-4
PROBES = ("When did Caroline go to the support group?", "a", "Melanie painted a sunrise " * 20)
_OPSET = 17
MISSING_ONNX = "the exporter needs the 'onnx' package: pip install 'hindsight-tools[onnx]'"


def _model_key(model_dir: Path) -> str:
    """Changes whenever the model's files or the exporter (torch) change."""
    import torch

    digest = hashlib.sha256(f"{torch.__version__}|{_OPSET}|{model_dir.resolve()}".encode())
    for path in sorted(model_dir.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(
                f"{path.relative_to(model_dir)}|{stat.st_size}|{stat.st_mtime_ns}".encode()
            )
    return digest.hexdigest()[:24]


def _token_embeddings(transformer: Any, names: Sequence[str]) -> Any:
    """The Hugging Face model as a module of plain tensors in, one tensor out, for export."""
    import torch

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = transformer

        def forward(self, *tensors: Any) -> Any:
            return self.model(**dict(zip(names, tensors, strict=True))).last_hidden_state

    return TokenEmbeddings().eval()


def export_transformer(model: Any, target: Path) -> None:
    """Writes the model's transformer as ONNX to ``target`` (atomically: concurrent
    processes may export the same model)."""
    try:
        importlib.import_module("onnx")  # torch.onnx.export writes the file with it
    except ImportError as exc:
        raise RuntimeError(MISSING_ONNX) from exc
    import torch

    features = model.preprocess(list(PROBES[:2]))
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in features]
    axes = {n: {0: "batch", 1: "tokens"} for n in [*names, "token_embeddings"]}
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".onnx.tmp")
    os.close(handle)
    try:
        # The tracer warns about Python branches on shapes; the agreement check in
        # load_query_encoder, on batches of mixed lengths, is what proves the export.
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _token_embeddings(model[0].auto_model, names),
                tuple(features[n] for n in names),
                temporary,
                input_names=names,
                output_names=["token_embeddings"],
                dynamic_axes=axes,
                opset_version=_OPSET,
                dynamo=False,
            )
        # mkstemp's 0600 would hide the file from other users of a shared cache folder.
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)


class OnnxQueryEncoder:
    """``encode(texts)`` as ``model.encode(texts, normalize_embeddings=True)`` would give
    it, with the transformer on onnxruntime (one thread: a query is too small to split)."""

    def __init__(self, model: Any, onnx_file: Path, tokenizer_lock: threading.Lock) -> None:
        # The model's Hugging Face tokenizer is shared with the torch path, and a fast
        # tokenizer raises "Already borrowed" when one thread changes its padding while
        # another encodes: tokenising takes the model's lock. onnxruntime's run and the
        # pooling modules (no state) need none.
        self._tokenizing = tokenizer_lock
        self._session = cpu_session(onnx_file, threads=1)
        self._inputs = [i.name for i in self._session.get_inputs()]
        self._model = model

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import torch

        with self._tokenizing:
            features = self._model.preprocess(list(texts))
        feed = {n: features[n].numpy().astype(np.int64) for n in self._inputs}
        (tokens,) = self._session.run(None, feed)
        pooled: dict[str, Any] = {
            "token_embeddings": torch.from_numpy(tokens),
            "attention_mask": features["attention_mask"],
        }
        with torch.inference_mode():
            for module in list(self._model)[1:]:
                pooled = module(pooled)
            vectors = torch.nn.functional.normalize(pooled["sentence_embedding"], dim=1)
        return np.asarray(vectors.numpy(), dtype=np.float32)


def load_query_encoder(
    model: Any, model_dir: Path, cache_dir: Path, tokenizer_lock: threading.Lock | None = None
) -> OnnxQueryEncoder | None:
    """The ONNX encoder for ``model`` (exported once into ``cache_dir``), or None when it
    cannot be built or disagrees with torch; the reason is logged. A cached export that
    fails is replaced by a fresh one before giving up. ``tokenizer_lock`` is the lock the
    caller's torch path holds while it uses the same model."""
    if not model_dir.is_dir():
        log.info("queries embed on torch: %s is not a local model folder", model_dir)
        return None
    lock = tokenizer_lock or threading.Lock()
    problem = ""
    try:
        target = cache_dir / f"{model_dir.name}-{_model_key(model_dir)}.onnx"
        fresh_only = not target.is_file()
    except OSError as exc:
        log.warning("queries embed on torch: cannot read %s (%s)", model_dir, exc)
        return None
    for fresh in (True,) if fresh_only else (False, True):
        try:
            if fresh:
                export_transformer(model, target)
            encoder = OnnxQueryEncoder(model, target, lock)
            difference = _difference(encoder, model)
        except Exception as exc:  # export and runtime failures have no common base
            problem = f"failed ({exc})"
            continue
        if difference <= AGREEMENT:
            return encoder
        problem = f"differs from torch by {difference:.2g}"
    log.warning("queries embed on torch: the ONNX export of %s %s", model_dir, problem)
    return None


def _difference(encoder: OnnxQueryEncoder, model: Any) -> float:
    """Largest gap to torch's vectors: the probes padded together, and the first alone as a
    recall's query is (one text, no padding)."""
    reference = np.asarray(
        model.encode(
            list(PROBES), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        ),
        dtype=np.float32,
    )
    together = np.abs(encoder.encode(PROBES) - reference).max()
    alone = np.abs(encoder.encode(PROBES[:1]) - reference[:1]).max()
    return float(max(together, alone))

"""One way to open an onnxruntime session on the CPU, for every model the engine runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any


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

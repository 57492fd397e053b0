"""A sentence-transformers ``CrossEncoder`` on the CPU, loaded from local files only."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from hindsight_tools.errors import RerankerError


class LocalCrossEncoder:
    name = "local"

    def __init__(self, model: str, *, batch_size: int = 32) -> None:
        self.batch_size = batch_size
        path = Path(model).expanduser()
        if not path.exists() and not _in_hub_cache(model):
            # checked first: even with local_files_only, transformers may probe the network
            # for seconds before giving up
            raise RerankerError(
                f"cross-encoder {model!r} is neither a local folder nor in the Hugging Face "
                "cache (no downloads are attempted)"
            )
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise RerankerError("the local reranker needs sentence-transformers") from exc
        try:
            # local_files_only: a hub download would hang or fail here, so fail fast and
            # let the chain move on to the next provider.
            self._model = CrossEncoder(
                str(path) if path.exists() else model, device="cpu", local_files_only=True
            )
        except Exception as exc:
            raise RerankerError(f"cannot load cross-encoder {model!r}: {exc}") from exc
        # torch modules are not safe to call from several threads at once.
        self._lock = threading.Lock()

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        with self._lock:
            scores = self._model.predict(
                [(query, d) for d in documents],
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        return [float(s) for s in scores]


def _in_hub_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    found = try_to_load_from_cache(repo_id, "config.json")
    return isinstance(found, str)

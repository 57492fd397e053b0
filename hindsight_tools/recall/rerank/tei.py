"""A Hugging Face Text Embeddings Inference server's ``POST /rerank``."""

from __future__ import annotations

from collections.abc import Sequence

from hindsight_tools.errors import RerankerError


class TeiReranker:
    name = "tei"

    def __init__(self, url: str, *, batch_size: int = 128, timeout: float = 10.0) -> None:
        try:
            import httpx  # the optional 'tei' extra
        except ImportError as exc:
            raise RerankerError(
                "the tei reranker needs the 'httpx' package: pip install 'hindsight-tools[tei]'"
            ) from exc
        self.batch_size = batch_size
        self._http_error = httpx.HTTPError
        self._client = httpx.Client(base_url=url.rstrip("/"), timeout=timeout)

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        try:
            response = self._client.post(
                "/rerank",
                json={
                    "query": query,
                    "texts": list(documents),
                    "raw_scores": False,
                    "truncate": True,
                },
            )
            response.raise_for_status()
            body = response.json()
            scores = [0.0] * len(documents)
            for hit in body:
                scores[int(hit["index"])] = float(hit["score"])
        except (self._http_error, ValueError, KeyError, TypeError, IndexError) as exc:
            raise RerankerError(f"TEI rerank at {self._client.base_url} failed: {exc}") from exc
        return scores

    def close(self) -> None:
        self._client.close()

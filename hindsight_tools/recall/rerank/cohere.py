"""Cohere's hosted rerank through the official ``cohere`` SDK (v2 API)."""

from __future__ import annotations

from collections.abc import Sequence

from hindsight_tools.errors import RerankerError


class CohereReranker:
    name = "cohere"
    # Cohere accepts up to 1,000 documents per call; one call keeps the round trips down.
    batch_size = 1000

    def __init__(
        self, *, api_key: str, model: str, base_url: str | None = None, timeout: float = 10.0
    ) -> None:
        try:
            import cohere
        except ImportError as exc:
            raise RerankerError(
                "the cohere reranker needs the 'cohere' package: "
                "pip install 'hindsight-tools[cohere]'"
            ) from exc
        self._model = model
        # max_retries=0: a slow or failing API should fall over to the next reranker at
        # once, not after the SDK's backoff.
        self._client = cohere.ClientV2(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0
        )

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        try:
            response = self._client.rerank(
                model=self._model, query=query, documents=list(documents), top_n=len(documents)
            )
        except Exception as exc:
            raise RerankerError(f"cohere rerank failed: {exc}") from exc
        scores = [0.0] * len(documents)
        for result in response.results:
            scores[result.index] = float(result.relevance_score)
        return scores

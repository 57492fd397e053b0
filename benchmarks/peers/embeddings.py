"""hindsight-tools' embedder seen through LangChain's and LlamaIndex's embedding interfaces.

The peers are compared on retrieval, not on embedding models: wrapping the one embedder
makes every dense vector in the benchmark bit-for-bit the vector hindsight-tools stores.
"""

from __future__ import annotations

from typing import Any

from langchain_core.embeddings import Embeddings
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr

from hindsight_tools.encoders.embedding import Embedder, embed_texts


class LangChainEmbeddings(Embeddings):
    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return embed_texts(self._embedder, texts).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class LlamaIndexEmbedding(BaseEmbedding):
    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Embedder, **kwargs: Any) -> None:
        super().__init__(model_name=embedder.name, embed_batch_size=256, **kwargs)
        self._embedder = embedder

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embeddings([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return embed_texts(self._embedder, texts).tolist()  # type: ignore[no-any-return]

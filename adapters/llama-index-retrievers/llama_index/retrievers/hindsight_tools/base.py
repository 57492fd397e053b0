"""``HindsightRetriever``: memories of one bank as LlamaIndex nodes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from hindsight_tools import MemoryEngine, RecallResult
from hindsight_tools.models import Budget, FactType, TagsMatch
from hindsight_tools.tools import chunk_texts, memory_metadata

# What a response synthesizer shows the LLM next to a memory's text; ids, scores and the
# like are for the program and only cost prompt tokens.
_LLM_METADATA = ("fact_type", "context", "occurred_start", "occurred_end", "mentioned_at")


class HindsightRetriever(BaseRetriever):
    """Recalls memories from ``bank_id`` as ``NodeWithScore``, best first.

    A node's text is the memory's text, its ``node_id`` the memory id, its score the
    memory's final score; its metadata holds the ids, dates, tags, entities, every score and
    the rank in each recall arm, with the user's own metadata under ``"metadata"``. The LLM
    sees only the fact type, context and dates next to the text. ``similarity_top_k`` caps
    the number of nodes; the other arguments are ``MemoryEngine.recall``'s (``metadata_filter``
    and ``occurred_after``/``occurred_before`` filter inside the recall). ``aretrieve`` runs
    on the engine's async twin (``engine.aio``).
    """

    def __init__(
        self,
        engine: MemoryEngine,
        bank_id: str,
        *,
        similarity_top_k: int | None = None,
        budget: Budget | None = None,
        max_tokens: int | None = None,
        types: list[FactType] | None = None,
        tags: list[str] | None = None,
        tags_match: TagsMatch | None = None,
        include_chunks: bool | None = None,
        max_chunk_tokens: int | None = None,
        query_timestamp: datetime | str | None = None,
        metadata_filter: dict[str, Any] | None = None,
        occurred_after: datetime | str | None = None,
        occurred_before: datetime | str | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        self._engine = engine
        self._bank_id = bank_id
        self._top_k = similarity_top_k
        self._options: dict[str, Any] = {
            "budget": budget,
            "max_tokens": max_tokens,
            "types": types,
            "tags": tags,
            "tags_match": tags_match,
            "include_chunks": include_chunks,
            "max_chunk_tokens": max_chunk_tokens,
            "query_timestamp": query_timestamp,
            "metadata_filter": metadata_filter,
            "occurred_after": occurred_after,
            "occurred_before": occurred_before,
        }
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self._engine.recall(self._bank_id, query_bundle.query_str, **self._options)
        return self._nodes(result)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        aengine = self._engine.aio
        result = await aengine.recall(self._bank_id, query_bundle.query_str, **self._options)
        return self._nodes(result)

    def _nodes(self, result: RecallResult) -> list[NodeWithScore]:
        chunks = chunk_texts(result)
        nodes = []
        for memory in result.memories[: self._top_k]:
            metadata = memory_metadata(memory, chunks.get(memory.chunk_id or ""))
            hidden = [k for k, v in metadata.items() if k not in _LLM_METADATA or v is None]
            node = TextNode(
                id_=memory.id,
                text=memory.text,
                metadata=metadata,
                excluded_llm_metadata_keys=hidden,
                excluded_embed_metadata_keys=list(metadata),
            )
            nodes.append(NodeWithScore(node=node, score=memory.scores.final))
        return nodes

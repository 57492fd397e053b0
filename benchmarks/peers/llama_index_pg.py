"""LlamaIndex's ``llama-index-vector-stores-postgres`` ``PGVectorStore(hybrid_search=True)``.

The store's own hybrid mode returns the dense top k followed by the sparse hits it has not
already returned, without fusing them (``_hybrid_query`` concatenates and de-duplicates), so
at k ≥ its sparse depth its ranking is the dense ranking. LlamaIndex's documented way to fuse
the two is a ``QueryFusionRetriever`` over a dense and a sparse (``to_tsquery`` OR of the
terms, ``ts_rank``) retriever on that same store; we use it with ``reciprocal_rerank`` (RRF,
k = 60), one query (no LLM query generation). Table ``data_li_hybrid`` in schema
``peer_llama_index``; the bank is a metadata key and every retriever filters on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores import ExactMatchFilter, MetadataFilters
from llama_index.vector_stores.postgres import PGVectorStore

from benchmarks.peers import DiaIds, Memory
from benchmarks.peers.embeddings import LlamaIndexEmbedding
from benchmarks.peers.langchain_pg import sqlalchemy_url
from hindsight_tools.embedding import Embedder

SCHEMA = "peer_llama_index"


class LlamaIndexSystem:
    name = "llama-index-postgres hybrid (RRF)"

    def __init__(self, conninfo: str, embedder: Embedder, *, depth: int) -> None:
        self.description = (
            "`PGVectorStore(hybrid_search=True, text_search_config='english')`; "
            f"`QueryFusionRetriever(mode='reciprocal_rerank', num_queries=1)` over its dense "
            f"and sparse retrievers, {depth} candidates each."
        )
        self._depth = depth
        self._store = PGVectorStore.from_params(
            connection_string=sqlalchemy_url(conninfo, "psycopg2"),
            async_connection_string=sqlalchemy_url(conninfo, "asyncpg"),
            table_name="li_hybrid",
            schema_name=SCHEMA,
            hybrid_search=True,
            text_search_config="english",
            embed_dim=embedder.dimension,
        )
        self._index = VectorStoreIndex.from_vector_store(
            self._store, embed_model=LlamaIndexEmbedding(embedder)
        )
        self._storage = StorageContext.from_defaults(vector_store=self._store)

    def retain(self, bank: str, items: Sequence[dict[str, Any]]) -> None:
        # Every node's source is the bank, so deleting by ref_doc_id empties exactly the bank.
        self._store.delete(bank)
        nodes = [
            TextNode(
                id_=f"{bank}/{m.id}",
                text=m.text,
                metadata={"bank": bank, "dia_id": m.dia_id},
                relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=bank)},
            )
            for m in map(Memory.from_item, items)
        ]
        self._index.insert_nodes(nodes)

    def recall(self, bank: str, query: str, k: int, *, query_time: str | None) -> DiaIds:
        filters = MetadataFilters(filters=[ExactMatchFilter(key="bank", value=bank)])
        retrievers = [
            self._index.as_retriever(
                vector_store_query_mode=mode, similarity_top_k=self._depth, filters=filters
            )
            for mode in ("default", "sparse")
        ]
        fusion = QueryFusionRetriever(
            retrievers,
            llm=MockLLM(),
            mode="reciprocal_rerank",  # type: ignore[arg-type]
            similarity_top_k=k,
            num_queries=1,
            use_async=False,
        )
        return [
            dia_id if isinstance(dia_id := found.node.metadata.get("dia_id"), str) else None
            for found in fusion.retrieve(query)
        ]

    def close(self) -> None:
        asyncio.run(self._store.close())

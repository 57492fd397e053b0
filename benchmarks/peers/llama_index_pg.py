"""LlamaIndex's ``llama-index-vector-stores-postgres`` ``PGVectorStore(hybrid_search=True)``.

The store's own hybrid mode returns the dense top k followed by the sparse hits it has not
already returned, without fusing them (``_hybrid_query`` concatenates and de-duplicates), so
at k ≥ its sparse depth its ranking is the dense ranking. LlamaIndex's documented way to fuse
the two is a ``QueryFusionRetriever`` over a dense and a sparse (``to_tsquery`` OR of the
terms, ``ts_rank``) retriever on that same store; we use it with ``reciprocal_rerank`` (RRF,
k = 60), one query (no LLM query generation). With ``rerank``, a cross-encoder node
postprocessor (:mod:`.rerank`) reorders the fused top ``rerank.top_n``. Table
``data_li_hybrid`` (``data_li_hybrid_ce`` with ``rerank``, so each system retains its own
copy) in schema ``peer_llama_index``; the bank is a metadata key and every retriever filters
on it; it is kept out of the embedded text (LlamaIndex embeds a node's
metadata with its text by default), so the vectors are the ones hindsight-tools stores.
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
from benchmarks.peers.rerank import CrossEncoderRerank
from hindsight_tools.encoders.embedding import Embedder

SCHEMA = "peer_llama_index"
METADATA_KEYS = ["bank", "dia_id"]


class LlamaIndexSystem:
    def __init__(
        self,
        conninfo: str,
        embedder: Embedder,
        *,
        depth: int,
        rerank: CrossEncoderRerank | None = None,
    ) -> None:
        self.name = "llama-index-postgres hybrid (RRF)"
        self.description = (
            "`PGVectorStore(hybrid_search=True, text_search_config='english')`; "
            f"`QueryFusionRetriever(mode='reciprocal_rerank', num_queries=1)` over its dense "
            f"and sparse retrievers, {depth} candidates each; metadata kept out of the "
            "embedded text."
        )
        if rerank is not None:
            self.name += f" + cross-encoder top {rerank.top_n}"
            self.description += (
                f" Its top {rerank.top_n} fused candidates are then reordered by a node "
                "postprocessor running hindsight-tools' `OnnxCrossEncoder` on each memory's "
                f"text, with {rerank.source}."
            )
        self._depth = depth
        self._rerank = rerank
        self._table = "li_hybrid" if rerank is None else "li_hybrid_ce"
        self._store = PGVectorStore.from_params(
            connection_string=sqlalchemy_url(conninfo, "psycopg2"),
            async_connection_string=sqlalchemy_url(conninfo, "asyncpg"),
            table_name=self._table,
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
                excluded_embed_metadata_keys=METADATA_KEYS,
                excluded_llm_metadata_keys=METADATA_KEYS,
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
            similarity_top_k=k if self._rerank is None else max(k, self._rerank.top_n),
            num_queries=1,
            use_async=False,
        )
        found = fusion.retrieve(query)
        if self._rerank is not None:
            found = self._rerank.postprocess_nodes(found, query_str=query)
        return [
            dia_id if isinstance(dia_id := hit.node.metadata.get("dia_id"), str) else None
            for hit in found[:k]
        ]

    def close(self) -> None:
        asyncio.run(self._store.close())

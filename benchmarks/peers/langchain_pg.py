"""LangChain's ``langchain-postgres`` ``PGVectorStore``: dense search, and its hybrid search
fused by its own ``reciprocal_rank_fusion``.

One table per configuration in schema ``peer_langchain`` (asyncpg through SQLAlchemy, as the
package requires); the bank is a metadata column and every search filters on it, the way
hindsight-tools filters on ``bank_id``. No vector index: a bank holds a few hundred rows, so
PostgreSQL scans them exactly, which is the best recall this store can give.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Sequence
from typing import Any

import psycopg
from langchain_core.documents import Document
from langchain_postgres import Column, PGEngine, PGVectorStore
from langchain_postgres.v2.hybrid_search_config import (
    HybridSearchConfig,
    reciprocal_rank_fusion,
)

from benchmarks.peers import DiaIds, Memory
from benchmarks.peers.embeddings import LangChainEmbeddings
from hindsight_tools.encoders.embedding import Embedder

SCHEMA = "peer_langchain"
ADD_BATCH = 256


def sqlalchemy_url(conninfo: str, driver: str) -> str:
    """``postgresql://…`` (libpq URI, as the embedded server gives it) -> SQLAlchemy's form."""
    scheme, _, rest = conninfo.partition("://")
    if scheme not in ("postgresql", "postgres"):
        raise ValueError(f"not a postgresql:// URI: {conninfo!r}")
    return f"postgresql+{driver}://{rest}"


class LangChainSystem:
    def __init__(self, conninfo: str, embedder: Embedder, *, hybrid: bool, depth: int) -> None:
        self.name = "langchain-postgres hybrid (RRF)" if hybrid else "langchain-postgres dense"
        self.description = (
            "`PGVectorStore` with `HybridSearchConfig(fusion_function=reciprocal_rank_fusion)`: "
            f"cosine kNN top {depth} and `ts_rank_cd` over a generated `tsvector` "
            f"(`plainto_tsquery('english', question)`, which needs every term of the question "
            f"to match) top {depth}, fused with k = 60; a fresh config per question (the store "
            "otherwise keeps the first question's text search for every later one)."
            if hybrid
            else "`PGVectorStore`, cosine distance, exact kNN filtered by bank."
        )
        table = "lc_hybrid" if hybrid else "lc_dense"
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        self._engine = PGEngine.from_connection_string(sqlalchemy_url(conninfo, "asyncpg"))
        self._hybrid = (
            HybridSearchConfig(
                fusion_function=reciprocal_rank_fusion,
                primary_top_k=depth,
                secondary_top_k=depth,
            )
            if hybrid
            else None
        )
        self._engine.init_vectorstore_table(
            table,
            embedder.dimension,
            schema_name=SCHEMA,
            metadata_columns=[Column("bank", "TEXT"), Column("dia_id", "TEXT")],
            overwrite_existing=True,
            hybrid_search_config=self._hybrid,
        )
        self._store = PGVectorStore.create_sync(
            self._engine,
            LangChainEmbeddings(embedder),
            table,
            schema_name=SCHEMA,
            metadata_columns=["bank", "dia_id"],
            hybrid_search_config=self._hybrid,
        )

    def retain(self, bank: str, items: Sequence[dict[str, Any]]) -> None:
        memories = [Memory.from_item(item) for item in items]
        self._store.delete(filter={"bank": {"$eq": bank}})
        for start in range(0, len(memories), ADD_BATCH):
            batch = memories[start : start + ADD_BATCH]
            self._store.add_documents(
                [
                    Document(page_content=m.text, metadata={"bank": bank, "dia_id": m.dia_id})
                    for m in batch
                ],
                ids=[str(uuid.uuid5(uuid.NAMESPACE_URL, f"{bank}/{m.id}")) for m in batch],
            )

    def recall(self, bank: str, query: str, k: int, *, query_time: str | None) -> DiaIds:
        options: dict[str, Any] = {}
        if self._hybrid is not None:
            # The store copies the *first* question into a shared config's fts_query and keeps
            # it for every later search; a fresh copy per question keeps each one's own text.
            options["hybrid_search_config"] = dataclasses.replace(
                self._hybrid,
                fts_query=query,
                fusion_function_parameters=dict(self._hybrid.fusion_function_parameters),
            )
        found = self._store.similarity_search(query, k=k, filter={"bank": {"$eq": bank}}, **options)
        return [
            dia_id if isinstance(dia_id := doc.metadata.get("dia_id"), str) else None
            for doc in found
        ]

    def close(self) -> None:
        asyncio.run(self._engine.close())

"""``HindsightRetriever``: a LangChain retriever over one memory bank."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from pydantic import Field

from hindsight_tools import (
    FieldProblem,
    InvalidRequestError,
    MemoryEngine,
    RecallResult,
    RecallToolArgs,
)
from hindsight_tools.models import Budget, FactType, TagsMatch
from hindsight_tools.tools import chunk_texts, memory_metadata
from langchain_hindsight_tools._bank import bank_for_call

# the recall options a retriever holds: the tool's arguments less the query itself
_RECALL_FIELDS = (
    *(name for name in RecallToolArgs.model_fields if name != "query"),
    "metadata_filter",
)


class HindsightRetriever(BaseRetriever):
    """Recalls memories from a hindsight-tools bank as ``Document`` objects, best first.

    ``page_content`` is the memory's text; ``metadata`` holds its id, fact type, dates, tags,
    entities, document and chunk ids, every score and its rank in each recall arm, and the
    user's own metadata under ``"metadata"`` (with ``include_chunks``, the source chunk's
    text under ``"chunk"``). The bank is ``bank_id``, or the run config's
    ``configurable["bank_id"]`` when none is bound; both given and different is an error.

    ``metadata_filter`` (a MongoDB-style filter on the memories' metadata) and
    ``occurred_after``/``occurred_before`` filter inside the recall, so the retriever still
    fills its budget. Each recall field can also be given per call:
    ``retriever.invoke(q, k=3, budget="high")``.
    Sync calls use the engine, async calls its async twin (``engine.aio``).
    """

    engine: MemoryEngine
    bank_id: str | None = None
    k: int | None = Field(default=None, ge=1, description="At most this many documents.")
    budget: Budget | None = None
    max_tokens: int | None = None
    types: list[FactType] | None = None
    tags: list[str] | None = None
    tags_match: TagsMatch | None = None
    include_chunks: bool | None = None
    max_chunk_tokens: int | None = None
    query_timestamp: datetime | None = None
    occurred_after: datetime | None = None
    occurred_before: datetime | None = None
    # the application's scope (e.g. what this user may see), applied inside every arm
    metadata_filter: dict[str, Any] | None = None

    def invoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        bank_id = bank_for_call(self.bank_id, _no_bank_kwarg(config, kwargs))
        return super().invoke(input, config, **kwargs, bank_id=bank_id)

    async def ainvoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        bank_id = bank_for_call(self.bank_id, _no_bank_kwarg(config, kwargs))
        return await super().ainvoke(input, config, **kwargs, bank_id=bank_id)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        bank_id, k, options = self._call(kwargs)
        return _documents(self.engine.recall(bank_id, query, **options), k)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        bank_id, k, options = self._call(kwargs)
        return _documents(await self.engine.aio.recall(bank_id, query, **options), k)

    def _call(self, overrides: dict[str, Any]) -> tuple[str, int | None, dict[str, Any]]:
        bank_id = overrides.pop("bank_id", None) or bank_for_call(self.bank_id, None)
        unknown = sorted(set(overrides) - {"k", *_RECALL_FIELDS})
        if unknown:
            allowed = ", ".join(("k", *_RECALL_FIELDS))
            raise InvalidRequestError(
                [FieldProblem(name, f"unknown option; allowed: {allowed}") for name in unknown]
            )
        values = {name: getattr(self, name) for name in ("k", *_RECALL_FIELDS)} | overrides
        k = values.pop("k")
        if k is not None and (not isinstance(k, int) or isinstance(k, bool) or k < 1):
            raise InvalidRequestError([FieldProblem("k", f"{k!r} is not an integer >= 1")])
        return bank_id, k, values


def _no_bank_kwarg(config: RunnableConfig | None, kwargs: dict[str, Any]) -> RunnableConfig | None:
    # one way to choose the bank per call, so that it can't be given twice, differently
    if "bank_id" in kwargs:
        raise InvalidRequestError(
            [
                FieldProblem(
                    "bank_id",
                    "is not an invoke option: bind it at construction or pass "
                    "config={'configurable': {'bank_id': ...}}",
                )
            ]
        )
    return config


def _documents(result: RecallResult, k: int | None) -> list[Document]:
    chunks = chunk_texts(result)
    return [
        Document(
            id=memory.id,
            page_content=memory.text,
            metadata=memory_metadata(memory, chunks.get(memory.chunk_id or "")),
        )
        for memory in result.memories[:k]
    ]

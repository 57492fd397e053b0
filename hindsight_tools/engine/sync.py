"""``MemoryEngine``: the core's programs run on worker threads and a sync pool."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from datetime import datetime
from typing import Any

import psycopg
from psycopg_pool import PoolTimeout

from hindsight_tools.encoders.embedding import (
    Embedder,
)
from hindsight_tools.engine.aio import AsyncMemoryEngine
from hindsight_tools.engine.core import (
    EngineCore,
    T,
    delete_bank_plan,
    pool_timeout_message,
    resolve_settings,
)
from hindsight_tools.errors import HindsightError, StoreError
from hindsight_tools.models import (
    Budget,
    FactType,
    ImportResult,
    ListOrder,
    MemoryItem,
    RecallResult,
    RetainResult,
    StoredMemory,
    TagsMatch,
)
from hindsight_tools.query.entities import EntityExtractor
from hindsight_tools.recall.rerank.base import Reranker
from hindsight_tools.runtime.plan import Plan, run_plan
from hindsight_tools.runtime.program import Blocking, Parallel, ParallelResult, Program
from hindsight_tools.settings import Settings
from hindsight_tools.store import bootstrap as store
from hindsight_tools.validation import validate_bank_id


class MemoryEngine:
    """The recall engine, synchronous.

    ``MemoryEngine()`` starts (or joins) the embedded PostgreSQL in
    ``HINDSIGHT_API_DATA_DIR``; ``MemoryEngine(database_url=...)`` (or
    ``HINDSIGHT_API_DATABASE_URL``) uses an external server with pgvector and pg_trgm.
    Use it as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        entity_extractor: EntityExtractor | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        self._core = EngineCore(
            resolve_settings(database_url, settings), embedder, entity_extractor, reranker
        )
        self._conninfo, self._server = self._core.connect()
        try:
            self._pool = store.open_pool(self._conninfo, self._core.settings)
        except BaseException:
            self._release_server()
            raise
        self._closed = False
        self._aio: AsyncMemoryEngine | None = None

    def open(self) -> MemoryEngine:
        """The engine, ready: a sync engine opens in its constructor, so this only checks it
        is not closed (the twin of :meth:`AsyncMemoryEngine.open`)."""
        if self._closed:
            raise StoreError("this MemoryEngine is closed")
        return self

    @property
    def settings(self) -> Settings:
        return self._core.settings

    @property
    def reranker_name(self) -> str:
        """The reranker recalls try first (``passthrough`` when there is no cross-encoder)."""
        return self._core.reranker.name

    @property
    def late_interaction(self) -> bool:
        """Whether recalls order the fused list by late interaction (the model loaded)."""
        return self._core.late_interaction is not None

    @property
    def database_url(self) -> str:
        return self._conninfo

    @property
    def aio(self) -> AsyncMemoryEngine:
        """The async twin on the same store, models and settings (opened on first use).

        It can be awaited from any event loop, one after another (each ``asyncio.run``);
        after ``await engine.aio.close()`` the next access gives a fresh twin.
        """
        if self._aio is None or self._aio._closed:
            self._aio = AsyncMemoryEngine._attached(self._core, self._conninfo)
        return self._aio

    def retain(self, bank_id: str, items: Iterable[MemoryItem | Mapping[str, Any]]) -> RetainResult:
        """Store ``items`` in ``bank_id`` (created on first use), all or nothing."""
        return self._drive(self._core.retain_program(bank_id, items))

    def recall(
        self,
        bank_id: str,
        query: str,
        *,
        budget: Budget | None = None,
        max_tokens: int | None = None,
        types: list[FactType] | None = None,
        tags: list[str] | None = None,
        tags_match: TagsMatch | None = None,
        include_chunks: bool | None = None,
        max_chunk_tokens: int | None = None,
        query_timestamp: datetime | str | None = None,
        trace: bool = False,
        metadata_filter: Mapping[str, Any] | None = None,
        occurred_after: datetime | str | None = None,
        occurred_before: datetime | str | None = None,
    ) -> RecallResult:
        """The memories of ``bank_id`` that answer ``query``, best first (docs/design.md,
        Recall request and Result).

        ``types``, ``tags``, ``metadata_filter`` and ``occurred_after``/``occurred_before``
        filter inside every arm, so a filtered recall still fills its budget: the filter is
        a MongoDB-style condition on each memory's metadata
        (:mod:`hindsight_tools.query.metadata_filter`), the dates keep the memories whose
        time span overlaps ``[occurred_after, occurred_before)`` (undated ones never). A
        time the query names (``"last spring"``) ranks, it never filters.
        """
        options = dict(
            budget=budget,
            max_tokens=max_tokens,
            types=types,
            tags=tags,
            tags_match=tags_match,
            include_chunks=include_chunks,
            max_chunk_tokens=max_chunk_tokens,
            query_timestamp=query_timestamp,
            trace=trace,
            metadata_filter=metadata_filter,
            occurred_after=occurred_after,
            occurred_before=occurred_before,
        )
        return self._drive(self._core.recall_program(bank_id, query, options))

    def import_memories(
        self,
        bank_id: str,
        items: Iterable[MemoryItem | Mapping[str, Any]],
        *,
        batch_size: int = 1000,
        embedding_model: str | None = None,
        progress: Callable[[int], object] | None = None,
        defer_indexes: bool = False,
    ) -> ImportResult:
        """Write a large stream of memories into ``bank_id``, ``batch_size`` per transaction.

        ``items`` is read lazily (a generator over a file is fine). Memories whose id the
        bank already holds are skipped, so an interrupted import resumes when run again;
        an item without an id gets one derived from its content. Items may bring their
        ``embedding`` (then ``embedding_model``, if given, must be this store's model):
        those are not re-embedded, and :meth:`backfill_token_vectors` gives them their
        late-interaction vectors later. ``progress`` is called with each batch's size.

        ``defer_indexes`` drops the store's indexes that only searches and forgetting read
        (HNSW, full-text, incoming links, postings by memory) for the load and builds them
        once after it (also when it fails), the way a restore does: 20,000 memories with
        their vectors went in about three times as fast into an empty store, but every
        bank's searches go without the indexes until then. For loading a store nobody
        searches meanwhile. They are kept when the bank is larger than the import holds in
        memory (``import_link_exact_max_units``);
        ``indexes_deferred`` in the result says which.
        """
        program = self._core.import_program(
            bank_id, items, batch_size, embedding_model, progress, defer_indexes
        )
        if defer_indexes is not True:
            return self._analyzed(self._drive(program))
        try:
            result = self._drive(program)
        except BaseException:
            # The import's own error is the one to see; an engine's next start builds what
            # this could not.
            with contextlib.suppress(HindsightError):
                self._drive(self._core.index_program())
            raise
        self._drive(self._core.index_program())
        return self._analyzed(result)

    def _analyzed(self, result: ImportResult) -> ImportResult:
        try:
            return self._drive(self._core.analyze_program(result))
        except HindsightError as exc:
            return self._core.analyze_failed(result, exc)

    def backfill_token_vectors(self, bank_id: str | None = None, *, batch: int = 256) -> int:
        """Computes and stores the late-interaction vectors of memories retained without
        them (before late interaction, or with it off), in ``bank_id`` or every bank.
        Reading in context (``HINDSIGHT_API_LATE_INTERACTION_CONTEXT``), it then also gives
        each memory that follows another in its document its missing reading after that
        one by position: a reading is dropped when the memory it was read after is
        forgotten or retained again, and memories retained with readings off have none (a
        reading dropped during the run, behind where the run has got to, waits for the next
        run). Returns how many memories were given vectors or a reading; 0 when late
        interaction is off."""
        return self._drive(self._core.backfill_program(bank_id, batch))

    def get_memories(self, bank_id: str, ids: Sequence[str]) -> list[StoredMemory]:
        """The stored memories among ``ids``, in the order asked; unknown ids are left out."""
        return self._drive(self._core.get_program(bank_id, ids))

    def list_memories(
        self,
        bank_id: str,
        *,
        metadata_filter: Mapping[str, Any] | None = None,
        types: list[FactType] | None = None,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        occurred_after: datetime | str | None = None,
        occurred_before: datetime | str | None = None,
        order: ListOrder = "id",
        limit: int = 100,
        offset: int = 0,
    ) -> list[StoredMemory]:
        """One page of the memories of ``bank_id`` that pass the filters (those of
        :meth:`recall`), ordered by id or (``order="updated_at"``) the most recently
        written first: ``offset`` 0, ``limit``, 2 × ``limit``, … page through a bank that
        doesn't change exactly once."""
        options = dict(
            metadata_filter=metadata_filter,
            types=types,
            tags=tags,
            tags_match=tags_match,
            occurred_after=occurred_after,
            occurred_before=occurred_before,
            order=order,
            limit=limit,
            offset=offset,
        )
        return self._drive(self._core.list_program(bank_id, options))

    def list_tags(self, bank_id: str, *, prefix: str | None = None) -> dict[str, int]:
        """Every tag in ``bank_id`` (only those starting with ``prefix`` when given), in code
        point order, with how many memories carry it."""
        return self._drive(self._core.tags_program(bank_id, prefix))

    def delete_memories(self, bank_id: str, ids: Sequence[str]) -> int:
        """Forget the memories among ``ids`` and everything derived from them (links, entity
        mentions, keyword statistics, token vectors, chunks no memory uses any more), in one
        transaction; returns how many there were."""
        return self._drive(self._core.delete_program(bank_id, ids))

    def delete_document(self, bank_id: str, document_id: str) -> int:
        """Forget a document, its chunks and every memory retained from it, in one
        transaction; returns how many memories went."""
        return self._drive(self._core.delete_document_program(bank_id, document_id))

    def delete_bank(self, bank_id: str) -> bool:
        """Remove a bank and everything in it; False if there was no such bank."""
        validate_bank_id(bank_id)
        return self._run(delete_bank_plan(bank_id))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._pool.close()
        self._release_server()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _release_server(self) -> None:
        if self._server is not None:
            self._server.release()
            self._server = None

    def _run(self, plan: Plan[T]) -> T:
        if self._closed:
            raise StoreError("this MemoryEngine is closed")
        try:
            with self._pool.connection() as conn:
                return run_plan(conn, plan)
        except PoolTimeout as exc:
            raise StoreError(pool_timeout_message(self._core.settings)) from exc
        except psycopg.Error as exc:  # from the pool itself; run_plan maps the rest
            raise StoreError(f"PostgreSQL connection failed: {exc}") from exc

    def _drive(self, program: Program[T]) -> T:
        value: Any = None
        while True:
            try:
                step = program.send(value)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            if isinstance(step, Blocking):
                value = step.fn()
            else:
                value = self._run_parallel(step)

    def _timed(self, work: Plan[Any] | Blocking) -> tuple[Any, float]:
        started = time.perf_counter()
        value = work.fn() if isinstance(work, Blocking) else self._run(work)
        return value, time.perf_counter() - started

    def _run_parallel(self, step: Parallel) -> ParallelResult:
        if len(step.plans) == 1:
            ((name, plan),) = step.plans.items()
            return {name: self._timed(plan)}
        pool = ThreadPoolExecutor(max_workers=len(step.plans))
        futures = {name: pool.submit(self._timed, plan) for name, plan in step.plans.items()}
        done, _ = wait(futures.values(), return_when=FIRST_EXCEPTION)
        failed = [f for f in futures.values() if f in done and f.exception() is not None]
        # As the async engine does: the first failure fails the call at once. Arms not yet
        # started never start; a thread can't be interrupted, so the running ones finish on
        # their own connections without anyone waiting for them.
        pool.shutdown(wait=not failed, cancel_futures=True)
        if failed:
            raise failed[0].exception()  # type: ignore[misc]
        return {name: future.result() for name, future in futures.items()}

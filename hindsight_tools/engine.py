"""``MemoryEngine`` and ``AsyncMemoryEngine``: the public entry points.

Both hold an :class:`_EngineCore` (settings, models, validation, the programs of
``retain``/``recall``) and differ only in how they run a program's steps: the sync engine on
threads and a sync pool, the async engine on the event loop and an async pool.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, TypeVar

import psycopg
import pydantic
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from hindsight_tools.encoders.embedding import (
    Embedder,
    canonical_model_name,
    default_embedder,
    embed_texts,
)
from hindsight_tools.encoders.late_interaction import load_late_interaction
from hindsight_tools.errors import FieldProblem, InvalidRequestError, StoreError
from hindsight_tools.models import (
    Budget,
    FactType,
    MemoryItem,
    RecallRequest,
    RecallResult,
    RetainResult,
    TagsMatch,
)
from hindsight_tools.query.entities import EntityExtractor, extract_entities
from hindsight_tools.query.time_window import extract_time_window
from hindsight_tools.recall.arms.bm25 import keyword_backend
from hindsight_tools.recall.pipeline import RecallServices, recall_program
from hindsight_tools.recall.rerank.base import PassthroughReranker, RerankChain, Reranker
from hindsight_tools.recall.rerank.providers import build_rerank_chain
from hindsight_tools.retain.plans import (
    missing_token_vectors_plan,
    prepare_items,
    retain_plan,
    store_token_vectors_plan,
)
from hindsight_tools.runtime.plan import Plan, Statement, arun_plan, run_plan
from hindsight_tools.runtime.program import Blocking, Parallel, ParallelResult, Program
from hindsight_tools.settings import Settings
from hindsight_tools.store import bootstrap as store
from hindsight_tools.store.embedded import EmbeddedServer, acquire_server
from hindsight_tools.validation import parse_items, problems_from_pydantic, validate_bank_id

T = TypeVar("T")
_DELETE_BANK = "DELETE FROM banks WHERE bank_id = %(bank)s RETURNING bank_id"


def _delete_bank_plan(bank_id: str) -> Plan[bool]:
    rows = yield Statement(_DELETE_BANK, {"bank": bank_id})
    return bool(rows)


class _EngineCore:
    """Everything an engine needs apart from I/O: configuration, models and programs."""

    def __init__(
        self,
        database_url: str | None,
        settings: Settings | None,
        embedder: Embedder | None,
        entity_extractor: EntityExtractor | None,
        reranker: Reranker | None,
    ) -> None:
        settings = settings or Settings()
        if database_url is not None:
            settings = settings.model_copy(update={"database_url": database_url})
        self.settings = settings
        self.embedder = embedder or default_embedder(
            settings.embeddings_model,
            settings.embeddings_batch_size,
            settings.embeddings_query_runtime,
            settings.embeddings_onnx_cache_dir,
        )
        self.entity_extractor = entity_extractor or extract_entities
        # A reranker passed in still gets passthrough behind it: a recall never fails
        # because its cross-encoder did.
        self.reranker = (
            build_rerank_chain(settings)
            if reranker is None
            else RerankChain(
                [reranker]
                if isinstance(reranker, PassthroughReranker)
                else [reranker, PassthroughReranker()]
            )
        )
        self.late_interaction = load_late_interaction(
            settings.late_interaction,
            settings.late_interaction_model_dir,
            settings.late_interaction_threads,
        )
        # dateparser loads its language data on first use (~0.3 s): pay it here, not in
        # the first recall.
        extract_time_window("on June 5, 2022", datetime.now(UTC))
        self.recall_services = RecallServices(
            settings,
            self.embedder,
            self.reranker,
            self.entity_extractor,
            keyword_backend(settings.text_search_extension, settings.bm25_k1, settings.bm25_b),
            self.late_interaction,
        )

    def connect(self) -> tuple[str, EmbeddedServer | None]:
        """The database URL to use (starting the embedded server if none is set), migrated."""
        server = None
        conninfo = self.settings.database_url
        if conninfo is None:
            server = acquire_server(self.settings.data_dir, self.settings.embedded_server_settings)
            conninfo = server.uri
        try:
            store.bootstrap(
                conninfo, self.embedder.dimension, canonical_model_name(self.embedder.name)
            )
        except BaseException:
            if server is not None:
                server.release()
            raise
        return conninfo, server

    def retain_program(
        self, bank_id: str, items: Iterable[MemoryItem | Mapping[str, Any]]
    ) -> Program[RetainResult]:
        validate_bank_id(bank_id)
        parsed = parse_items(items, self.settings)
        prepared = prepare_items(parsed, self.entity_extractor)
        texts = [item.text for item in parsed]
        # One model after the other: a batch keeps both cores busy on its own, and side by
        # side measured within the host's noise (benchmarks/retain_bench.py).
        embeddings = yield Blocking(lambda: embed_texts(self.embedder, texts))
        late = self.late_interaction
        token_vectors = (
            None if late is None else (yield Blocking(lambda: late.encode_documents(texts)))
        )
        done: ParallelResult = yield Parallel(
            {"retain": retain_plan(bank_id, prepared, embeddings, self.settings, token_vectors)}
        )
        return done["retain"][0]  # type: ignore[no-any-return]

    def backfill_program(self, bank_id: str | None, batch: int) -> Program[int]:
        """Stores late-interaction vectors for memories that have none, ``batch`` at a
        time (each batch its own transaction); returns how many were encoded (a memory
        re-retained meanwhile keeps the vectors of its new text)."""
        if bank_id is not None:
            validate_bank_id(bank_id)
        if batch < 1:
            raise InvalidRequestError([FieldProblem("batch", f"must be at least 1, got {batch}")])
        late = self.late_interaction
        if late is None:
            return 0
        filled = 0
        while True:
            found: ParallelResult = yield Parallel(
                {"todo": missing_token_vectors_plan(bank_id, batch)}
            )
            todo: list[tuple[str, str, str]] = found["todo"][0]
            if not todo:
                return filled
            vectors = yield Blocking(
                functools.partial(late.encode_documents, [t for *_, t in todo])
            )
            yield Parallel({"store": store_token_vectors_plan(todo, vectors)})
            filled += len(todo)

    def recall_program(
        self, bank_id: str, query: str, options: dict[str, Any]
    ) -> Program[RecallResult]:
        validate_bank_id(bank_id)
        request = self.recall_request(query, options)
        return (yield from recall_program(self.recall_services, bank_id, request))

    @staticmethod
    def recall_request(query: str, options: dict[str, Any]) -> RecallRequest:
        given = {k: v for k, v in options.items() if v is not None}
        try:
            return RecallRequest.model_validate({"query": query, **given})
        except pydantic.ValidationError as exc:
            raise InvalidRequestError(problems_from_pydantic(exc, "", RecallRequest)) from None


def _pool_timeout_message(settings: Settings) -> str:
    return (
        f"no database connection became free within {settings.pool_timeout:g} s "
        f"(all {settings.pool_max_size} pooled connections busy, or PostgreSQL unreachable); "
        "raise HINDSIGHT_API_POOL_MAX_SIZE or HINDSIGHT_API_POOL_TIMEOUT"
    )


def _recall_options(
    budget: Budget | None,
    max_tokens: int | None,
    types: list[FactType] | None,
    tags: list[str] | None,
    tags_match: TagsMatch | None,
    include_chunks: bool | None,
    max_chunk_tokens: int | None,
    query_timestamp: datetime | str | None,
    trace: bool,
) -> dict[str, Any]:
    return {
        "budget": budget,
        "max_tokens": max_tokens,
        "types": types,
        "tags": tags,
        "tags_match": tags_match,
        "include_chunks": include_chunks,
        "max_chunk_tokens": max_chunk_tokens,
        "query_timestamp": query_timestamp,
        "trace": trace,
    }


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
        self._core = _EngineCore(database_url, settings, embedder, entity_extractor, reranker)
        self._conninfo, self._server = self._core.connect()
        try:
            self._pool = store.open_pool(self._conninfo, self._core.settings)
        except BaseException:
            self._release_server()
            raise
        self._closed = False
        self._aio: AsyncMemoryEngine | None = None

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
    ) -> RecallResult:
        """The memories of ``bank_id`` that answer ``query``, best first (docs/design.md, Recall request and Result)."""
        options = _recall_options(
            budget,
            max_tokens,
            types,
            tags,
            tags_match,
            include_chunks,
            max_chunk_tokens,
            query_timestamp,
            trace,
        )
        return self._drive(self._core.recall_program(bank_id, query, options))

    def backfill_token_vectors(self, bank_id: str | None = None, *, batch: int = 256) -> int:
        """Computes and stores the late-interaction vectors of memories retained without
        them (before late interaction, or with it off), in ``bank_id`` or every bank.
        Returns how many memories were encoded; 0 when late interaction is off."""
        return self._drive(self._core.backfill_program(bank_id, batch))

    def delete_bank(self, bank_id: str) -> bool:
        """Remove a bank and everything in it; False if there was no such bank."""
        validate_bank_id(bank_id)
        return self._run(_delete_bank_plan(bank_id))

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
            raise StoreError(_pool_timeout_message(self._core.settings)) from exc
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
        with ThreadPoolExecutor(max_workers=len(step.plans)) as pool:
            futures = {name: pool.submit(self._timed, plan) for name, plan in step.plans.items()}
            return {name: future.result() for name, future in futures.items()}


async def _keep_pool(
    pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]], release: asyncio.Future[None]
) -> None:
    """Close ``pool`` when ``release`` is done, or when the pool's event loop ends.

    ``asyncio.run`` (like every test's loop) cancels the tasks still pending when it ends,
    and a pool still open then can hang it: a worker cancelled while connecting swallows the
    cancellation and waits on. Cancelled with the others, this task closes the pool, and
    closing stops those workers.
    """
    try:
        await release
    finally:
        await pool.close()


def _release(release: asyncio.Future[None]) -> None:
    if not release.done():
        release.set_result(None)


class AsyncMemoryEngine:
    """The recall engine, asynchronous: the same methods as :class:`MemoryEngine`, awaited.

    ``async with AsyncMemoryEngine() as engine`` (or ``await engine.open()``); the first call
    opens it too. Blocking work (starting the embedded server, embedding) runs in worker
    threads so the event loop stays free.
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
        self._core = _EngineCore(database_url, settings, embedder, entity_extractor, reranker)
        self._conninfo: str | None = None
        self._server: EmbeddedServer | None = None
        self._owns_store = True
        self._pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._keeper: tuple[asyncio.Task[None], asyncio.Future[None]] | None = None
        self._opening: asyncio.Lock | None = None
        self._closed = False

    @classmethod
    def _attached(cls, core: _EngineCore, conninfo: str) -> AsyncMemoryEngine:
        engine = cls.__new__(cls)
        engine._core = core
        engine._conninfo = conninfo
        engine._server = None
        engine._owns_store = False
        engine._pool = None
        engine._loop = None
        engine._keeper = None
        engine._opening = None
        engine._closed = False
        return engine

    @property
    def settings(self) -> Settings:
        return self._core.settings

    async def open(self) -> AsyncMemoryEngine:
        if self._closed:
            raise StoreError("this AsyncMemoryEngine is closed")
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._leave_loop()
            self._loop = loop
        if self._pool is not None:
            return self
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._pool is None:
                if self._conninfo is None:
                    conninfo, self._server = await asyncio.to_thread(self._core.connect)
                    self._conninfo = conninfo
                else:
                    conninfo = self._conninfo
                pool = await store.open_async_pool(conninfo, self._core.settings)
                release = loop.create_future()
                keeper = loop.create_task(_keep_pool(pool, release), name="hindsight-pool")
                self._pool, self._keeper = pool, (keeper, release)
        return self

    def _leave_loop(self) -> None:
        # A pool's workers are tasks of the loop that opened it: used from another loop
        # (a second asyncio.run, a test's own loop) it could never grow or heal. Its keeper
        # closes it: now if that loop still runs elsewhere, else it did when the loop ended.
        old_loop, keeper = self._loop, self._keeper
        self._pool, self._keeper, self._opening = None, None, None
        if keeper is not None and old_loop is not None and old_loop.is_running():
            old_loop.call_soon_threadsafe(_release, keeper[1])

    async def retain(
        self, bank_id: str, items: Iterable[MemoryItem | Mapping[str, Any]]
    ) -> RetainResult:
        return await self._drive(self._core.retain_program(bank_id, items))

    async def recall(
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
    ) -> RecallResult:
        options = _recall_options(
            budget,
            max_tokens,
            types,
            tags,
            tags_match,
            include_chunks,
            max_chunk_tokens,
            query_timestamp,
            trace,
        )
        return await self._drive(self._core.recall_program(bank_id, query, options))

    @property
    def late_interaction(self) -> bool:
        """See :attr:`MemoryEngine.late_interaction`."""
        return self._core.late_interaction is not None

    async def backfill_token_vectors(self, bank_id: str | None = None, *, batch: int = 256) -> int:
        """See :meth:`MemoryEngine.backfill_token_vectors`."""
        return await self._drive(self._core.backfill_program(bank_id, batch))

    async def delete_bank(self, bank_id: str) -> bool:
        validate_bank_id(bank_id)
        return await self._run(_delete_bank_plan(bank_id))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._loop is not asyncio.get_running_loop():
            self._leave_loop()
        if self._keeper is not None:
            keeper, release = self._keeper
            _release(release)
            await keeper
            self._pool, self._keeper = None, None
        if self._server is not None and self._owns_store:
            await asyncio.to_thread(self._server.release)
            self._server = None

    async def __aenter__(self) -> AsyncMemoryEngine:
        return await self.open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _run(self, plan: Plan[T]) -> T:
        await self.open()
        assert self._pool is not None
        try:
            async with self._pool.connection() as conn:
                return await arun_plan(conn, plan)
        except PoolTimeout as exc:
            raise StoreError(_pool_timeout_message(self._core.settings)) from exc
        except psycopg.Error as exc:  # from the pool itself; run_plan maps the rest
            raise StoreError(f"PostgreSQL connection failed: {exc}") from exc

    async def _drive(self, program: Program[T]) -> T:
        value: Any = None
        while True:
            try:
                step = program.send(value)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            if isinstance(step, Blocking):
                value = await asyncio.to_thread(step.fn)
            else:
                value = await self._run_parallel(step)

    async def _timed(self, work: Plan[Any] | Blocking) -> tuple[Any, float]:
        started = time.perf_counter()
        if isinstance(work, Blocking):
            value = await asyncio.to_thread(work.fn)
        else:
            value = await self._run(work)
        return value, time.perf_counter() - started

    async def _run_parallel(self, step: Parallel) -> ParallelResult:
        names = list(step.plans)
        tasks = [asyncio.ensure_future(self._timed(step.plans[n])) for n in names]
        try:
            values = await asyncio.gather(*tasks)
        except BaseException:
            # One arm failed: stop the others instead of leaving them running (and their
            # errors unretrieved) after the call has already failed.
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return dict(zip(names, values, strict=True))

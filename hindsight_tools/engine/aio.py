"""``AsyncMemoryEngine``: the core's programs run on the event loop and an async pool."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from hindsight_tools.encoders.embedding import (
    Embedder,
)
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
from hindsight_tools.runtime.plan import Plan, arun_plan
from hindsight_tools.runtime.program import Blocking, Parallel, ParallelResult, Program
from hindsight_tools.settings import Settings
from hindsight_tools.store import bootstrap as store
from hindsight_tools.store.embedded import EmbeddedServer
from hindsight_tools.validation import validate_bank_id


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


_NOT_OPEN = "this AsyncMemoryEngine is not open yet: `await engine.open()` or `async with` it"


class AsyncMemoryEngine:
    """The recall engine, asynchronous: the same methods as :class:`MemoryEngine`, awaited.

    ``async with AsyncMemoryEngine() as engine`` (or ``await engine.open()``); the first call
    opens it too. Blocking work (loading the models, starting the embedded server, embedding)
    runs in worker threads so the event loop stays free; that is why the constructor only
    takes the configuration, and what needs the models (:attr:`reranker_name`,
    :attr:`late_interaction`) or the server (:attr:`database_url`) is there once it is open.
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
        self._settings = resolve_settings(database_url, settings)
        self._models = (embedder, entity_extractor, reranker)
        self._core: EngineCore | None = None
        self._conninfo: str | None = None
        self._server: EmbeddedServer | None = None
        self._owns_store = True
        self._pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._keeper: tuple[asyncio.Task[None], asyncio.Future[None]] | None = None
        self._opening: asyncio.Lock | None = None
        self._closed = False

    @classmethod
    def _attached(cls, core: EngineCore, conninfo: str) -> AsyncMemoryEngine:
        engine = cls.__new__(cls)
        engine._settings = core.settings
        engine._models = (None, None, None)  # the core is built already
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
        return self._settings

    @property
    def reranker_name(self) -> str:
        """See :attr:`MemoryEngine.reranker_name` (known once the engine is open)."""
        return self._open_core().reranker.name

    @property
    def late_interaction(self) -> bool:
        """See :attr:`MemoryEngine.late_interaction` (known once the engine is open)."""
        return self._open_core().late_interaction is not None

    @property
    def database_url(self) -> str:
        """See :attr:`MemoryEngine.database_url` (known once the engine is open)."""
        if self._conninfo is None:
            raise StoreError(_NOT_OPEN)
        return self._conninfo

    def _open_core(self) -> EngineCore:
        if self._core is None:
            raise StoreError(_NOT_OPEN)
        return self._core

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
            if self._core is None:
                self._core = await asyncio.to_thread(EngineCore, self._settings, *self._models)
            if self._pool is None:
                if self._conninfo is None:
                    conninfo, self._server = await asyncio.to_thread(self._core.connect)
                    self._conninfo = conninfo
                else:
                    conninfo = self._conninfo
                pool = await store.open_async_pool(conninfo, self._settings)
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
        core = await self._ready()
        return await self._drive(core.retain_program(bank_id, items))

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
        metadata_filter: Mapping[str, Any] | None = None,
        occurred_after: datetime | str | None = None,
        occurred_before: datetime | str | None = None,
    ) -> RecallResult:
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
        core = await self._ready()
        return await self._drive(core.recall_program(bank_id, query, options))

    async def import_memories(
        self,
        bank_id: str,
        items: Iterable[MemoryItem | Mapping[str, Any]],
        *,
        batch_size: int = 1000,
        embedding_model: str | None = None,
        progress: Callable[[int], object] | None = None,
        defer_indexes: bool = False,
    ) -> ImportResult:
        """See :meth:`MemoryEngine.import_memories`."""
        core = await self._ready()
        program = core.import_program(
            bank_id, items, batch_size, embedding_model, progress, defer_indexes
        )
        if defer_indexes is not True:
            return await self._analyzed(core, await self._drive(program))
        try:
            result = await self._drive(program)
        except BaseException:
            # The import's own error is the one to see; an engine's next start builds what
            # this could not.
            with contextlib.suppress(HindsightError):
                await self._drive(core.index_program())
            raise
        await self._drive(core.index_program())
        return await self._analyzed(core, result)

    async def _analyzed(self, core: EngineCore, result: ImportResult) -> ImportResult:
        try:
            return await self._drive(core.analyze_program(result))
        except HindsightError as exc:
            return core.analyze_failed(result, exc)

    async def backfill_token_vectors(self, bank_id: str | None = None, *, batch: int = 256) -> int:
        """See :meth:`MemoryEngine.backfill_token_vectors`."""
        core = await self._ready()
        return await self._drive(core.backfill_program(bank_id, batch))

    async def get_memories(self, bank_id: str, ids: Sequence[str]) -> list[StoredMemory]:
        """The stored memories among ``ids``, in the order asked; unknown ids are left out."""
        core = await self._ready()
        return await self._drive(core.get_program(bank_id, ids))

    async def list_memories(
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
        """See :meth:`MemoryEngine.list_memories`."""
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
        core = await self._ready()
        return await self._drive(core.list_program(bank_id, options))

    async def list_tags(self, bank_id: str, *, prefix: str | None = None) -> dict[str, int]:
        """See :meth:`MemoryEngine.list_tags`."""
        core = await self._ready()
        return await self._drive(core.tags_program(bank_id, prefix))

    async def delete_memories(self, bank_id: str, ids: Sequence[str]) -> int:
        """Forget the memories among ``ids`` and everything derived from them (links, entity
        mentions, keyword statistics, token vectors, chunks no memory uses any more), in one
        transaction; returns how many there were."""
        core = await self._ready()
        return await self._drive(core.delete_program(bank_id, ids))

    async def delete_document(self, bank_id: str, document_id: str) -> int:
        """Forget a document, its chunks and every memory retained from it, in one
        transaction; returns how many memories went."""
        core = await self._ready()
        return await self._drive(core.delete_document_program(bank_id, document_id))

    async def delete_bank(self, bank_id: str) -> bool:
        validate_bank_id(bank_id)
        return await self._run(delete_bank_plan(bank_id))

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

    async def _ready(self) -> EngineCore:
        await self.open()
        return self._open_core()

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
            raise StoreError(pool_timeout_message(self._settings)) from exc
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

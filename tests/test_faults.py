"""Faults: a failing embedder or reranker, slow queries, lost connections, a restarted server,
a process killed mid-retain. Each call fails with a documented error or degrades; none hangs,
none leaves partial rows, and the engine works again afterwards without a restart."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import psutil
import psycopg
import pytest

from hindsight_tools import (
    AsyncMemoryEngine,
    EmbedderError,
    MemoryEngine,
    Settings,
    StoreError,
)
from hindsight_tools.encoders.embedding import Vectors
from hindsight_tools.settings import DEFAULT_EMBEDDINGS_MODEL
from hindsight_tools.store.embedded import pgdata_for
from tests.conftest import BANK_TABLES, count
from tests.faults import (
    Conn,
    backends,
    bank_row_held,
    named,
    rows_mentioning,
    start_server,
    stop_server,
    table_locked,
    wait_for,
    waiting_on_a_lock,
)
from tests.test_embedded import postmaster_pid

ITEMS = [
    {"id": "alps", "text": "Went hiking in the Alps with Jonas", "occurred_start": "2023-06-10"},
    {"id": "cello", "text": "Bruno plays the cello in an orchestra"},
    {"id": "paris", "text": "Alice met Bob in Paris", "document_id": "d", "chunk": "the chat"},
]


class BrokenEmbedder:
    """The store's own model and dimension, but it falls over (as an out-of-memory error
    would). It carries the real model's name: a store refuses an embedder of another model."""

    name = DEFAULT_EMBEDDINGS_MODEL
    dimension = 384

    def __init__(self, shape_only: bool = False) -> None:
        self.shape_only = shape_only

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.shape_only:
            return np.zeros((len(texts), 3), dtype=np.float32)
        raise RuntimeError("CUDA out of memory")


class RaisingReranker:
    name = "raising"
    batch_size = 8

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        raise RuntimeError("cross-encoder crashed")


class AsyncTwins:
    """Recalls through engines' async twins, all on one event loop: an async pool belongs to
    the loop that opened it. Closes the twins (then the loop) at the end of the test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.opened: list[MemoryEngine] = []

    def recall(self, engine: MemoryEngine, bank: str, query: str) -> list[str]:
        self.opened.append(engine)
        result = self.loop.run_until_complete(engine.aio.recall(bank, query))
        return [m.id for m in result.memories]

    def close(self) -> None:
        for engine in self.opened:
            self.loop.run_until_complete(engine.aio.close())
        self.loop.close()


@pytest.fixture
def twins() -> Iterator[AsyncTwins]:
    twins = AsyncTwins()
    yield twins
    twins.close()


@pytest.mark.parametrize("shape_only", [False, True])
def test_an_embedder_failure_is_an_embedder_error_and_writes_nothing(
    engine: MemoryEngine, settings: Settings, bank: str, db: Conn, shape_only: bool
) -> None:
    with MemoryEngine(
        engine.database_url, settings=settings, embedder=BrokenEmbedder(shape_only)
    ) as broken:
        with pytest.raises(EmbedderError, match="all-MiniLM-L6-v2") as caught:
            broken.retain(bank, ITEMS)
        assert all(count(db, table, bank) == 0 for table in BANK_TABLES)
        with pytest.raises(EmbedderError, match="all-MiniLM-L6-v2"):
            broken.recall(bank, "Where did I go hiking?")

        async def through_the_async_engine() -> None:
            async with broken.aio as aio:
                await aio.recall(bank, "Where did I go hiking?")

        with pytest.raises(EmbedderError, match="all-MiniLM-L6-v2"):
            asyncio.run(through_the_async_engine())
    if not shape_only:
        assert isinstance(caught.value.__cause__, RuntimeError)


def test_a_reranker_failure_degrades_the_recall_to_passthrough(
    engine: MemoryEngine, settings: Settings, bank: str
) -> None:
    engine.retain(bank, ITEMS)
    passthrough = settings.model_copy(update={"reranker_provider": "passthrough"})
    with MemoryEngine(engine.database_url, settings=passthrough) as plain:
        expected = [m.id for m in plain.recall(bank, "Where did I go hiking?").memories]
    # nothing kept above the cross-encoder, or the few memories here would never reach it
    failing = settings.model_copy(update={"reranker_keep": 0})
    with MemoryEngine(engine.database_url, settings=failing, reranker=RaisingReranker()) as eng:
        result = eng.recall(bank, "Where did I go hiking?", trace=True)

        async def through_the_async_engine() -> list[str]:
            async with eng.aio as aio:
                found = await aio.recall(bank, "Where did I go hiking?")
            return [m.id for m in found.memories]

        async_ids = asyncio.run(through_the_async_engine())
    assert result.trace is not None
    assert (result.trace.reranker, result.trace.reranker_failed) == ("passthrough", ["raising"])
    assert [m.id for m in result.memories] == expected == async_ids
    assert expected[0] == "alps"


def test_a_recall_statement_past_its_limit_fails_with_a_store_error(
    engine: MemoryEngine, settings: Settings, bank: str
) -> None:
    engine.retain(bank, ITEMS)
    limited = settings.model_copy(
        update={"recall_statement_timeout": 0.3, "pool_min_size": 1, "pool_max_size": 1}
    )
    with MemoryEngine(engine.database_url, settings=limited) as eng:
        with table_locked(engine.database_url, "memory_units") as release:
            # Without a limit the recall would wait for the lock, then succeed.
            timer = threading.Timer(15.0, release)
            timer.start()
            try:
                with pytest.raises(StoreError, match="HINDSIGHT_API_RECALL_STATEMENT_TIMEOUT"):
                    eng.recall(bank, "Where did I go hiking?")
            finally:
                timer.cancel()
        assert eng.recall(bank, "Where did I go hiking?").memories[0].id == "alps"
        with eng._pool.connection() as conn:  # the one pooled connection: the limit didn't leak
            assert conn.execute("SHOW statement_timeout").fetchone() == ("0",)


def test_an_async_recall_past_its_limit_fails_and_leaves_no_arm_running(
    engine: MemoryEngine, settings: Settings, bank: str
) -> None:
    engine.retain(bank, ITEMS)
    limited = settings.model_copy(update={"recall_statement_timeout": 0.3})

    async def scenario() -> list[asyncio.Task[object]]:
        async with AsyncMemoryEngine(engine.database_url, settings=limited) as aio:
            with table_locked(engine.database_url, "memory_units") as release:
                timer = threading.Timer(15.0, release)
                timer.start()
                try:
                    with pytest.raises(StoreError, match="RECALL_STATEMENT_TIMEOUT"):
                        await aio.recall(bank, "Where did I go hiking?")
                finally:
                    timer.cancel()
            # The graph arm outlives the first failing arm (its fallback query runs after
            # its own limit); it must have been stopped, not left running.
            return [
                task
                for task in asyncio.all_tasks()
                if not task.done() and task.get_coro().__name__ == "_timed"  # type: ignore[union-attr]
            ]

    assert asyncio.run(scenario()) == []


def test_lost_connections_fail_the_call_in_flight_and_the_engine_recovers(
    engine: MemoryEngine,
    settings: Settings,
    bank: str,
    db: Conn,
    twins: AsyncTwins,
) -> None:
    engine.retain(bank, ITEMS[:1])
    roomy = settings.model_copy(update={"pool_min_size": 3})
    url = named(engine.database_url, "ht-victim")
    with MemoryEngine(url, settings=roomy) as victim, ThreadPoolExecutor(1) as pool:
        # The async twin's pool is open too, and loses its connections as well.
        assert twins.recall(victim, bank, "hiking") == ["alps"]
        with bank_row_held(engine.database_url, bank):
            in_flight = pool.submit(victim.retain, bank, ITEMS[1:])
            wait_for(lambda: waiting_on_a_lock(db, "ht-victim"))
            db.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'ht-victim'"
            )
            with pytest.raises(StoreError, match="lost the connection to PostgreSQL") as lost:
                in_flight.result(timeout=60)
        assert isinstance(lost.value.__cause__, psycopg.OperationalError)
        assert count(db, "memory_units", bank) == 1  # the interrupted retain left nothing
        # Every pooled connection, sync and async, was killed; the same engine carries on.
        victim.retain(bank, ITEMS[1:])
        found = victim.recall(bank, "orchestra cello hiking Paris").memories
        assert {m.id for m in found} == {"alps", "cello", "paris"}
        assert "cello" in twins.recall(victim, bank, "the cello")


def test_an_exhausted_async_pool_times_out_with_a_clear_error(
    engine: MemoryEngine, settings: Settings
) -> None:
    tight = settings.model_copy(
        update={"pool_min_size": 1, "pool_max_size": 1, "pool_timeout": 0.3}
    )

    async def scenario() -> bool:
        async with AsyncMemoryEngine(engine.database_url, settings=tight) as small:
            assert small._pool is not None
            async with small._pool.connection():
                with pytest.raises(StoreError, match="no database connection became free"):
                    await small.delete_bank("anything")
            return await small.delete_bank("anything")

    assert asyncio.run(scenario()) is False


@pytest.fixture(scope="module")
def own_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory of these tests' own, so restarting its server disturbs no one."""
    return Path(tmp_path_factory.mktemp("flt", numbered=True))


@pytest.fixture
def own_engine(settings: Settings, own_data_dir: Path) -> Iterator[MemoryEngine]:
    own = settings.model_copy(update={"data_dir": own_data_dir, "pool_timeout": 10.0})
    with MemoryEngine(settings=own) as engine:
        yield engine


def test_a_server_restart_fails_calls_in_flight_and_later_calls_succeed(
    own_engine: MemoryEngine, own_data_dir: Path, twins: AsyncTwins
) -> None:
    bank = "restart"
    own_engine.retain(bank, ITEMS[:1])
    assert twins.recall(own_engine, bank, "hiking") == ["alps"]
    url = own_engine.database_url
    with (
        ThreadPoolExecutor(1) as pool,
        psycopg.connect(url, autocommit=True) as watcher,
        bank_row_held(url, bank),
    ):
        in_flight = pool.submit(own_engine.retain, bank, ITEMS[1:])
        wait_for(lambda: waiting_on_a_lock(watcher))
        stop_server(own_data_dir)
        with pytest.raises(StoreError, match="lost the connection to PostgreSQL"):
            in_flight.result(timeout=60)
    start_server(own_data_dir)
    # Same process, same engine: the pools drop their dead connections and open new ones.
    assert [m.id for m in own_engine.recall(bank, "hiking in the Alps").memories] == ["alps"]
    own_engine.retain(bank, ITEMS[1:])
    assert "cello" in twins.recall(own_engine, bank, "the cello")


# Joins the embedded server on argv[1] and commits one retain; on a line from the parent
# starts a second one, which the parent holds mid-transaction until it kills this process.
CHILD = """
import sys
from pathlib import Path
from hindsight_tools import MemoryEngine, Settings
engine = MemoryEngine(settings=Settings(data_dir=Path(sys.argv[1])))
engine.retain("killed", [{"id": "child-committed", "text": "Committed before the kill"}])
print("committed", flush=True)
sys.stdin.readline()
engine.retain("killed", [
    {"id": "child-partial", "text": "Never committed", "document_id": "doc-partial",
     "chunk": "partial chunk", "entities": ["Partial Person"], "tags": ["partial"]},
])
print("unreachable", flush=True)
"""


def test_a_process_killed_mid_retain_leaves_no_partial_rows_and_a_stoppable_server(
    settings: Settings, own_data_dir: Path
) -> None:
    own = settings.model_copy(update={"data_dir": own_data_dir})
    parent = MemoryEngine(settings=own)
    try:
        parent.retain("killed", [{"id": "parent", "text": "Written by the parent"}])
        url = parent.database_url
        with subprocess.Popen(
            [sys.executable, "-c", CHILD, str(own_data_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PGAPPNAME": "ht-child"},
        ) as child:
            assert child.stdin is not None and child.stdout is not None
            try:
                assert child.stdout.readline().strip() == "committed"
                with (
                    psycopg.connect(url, autocommit=True) as watcher,
                    bank_row_held(url, "killed"),
                ):
                    child.stdin.write("go\n")
                    child.stdin.flush()
                    wait_for(lambda: waiting_on_a_lock(watcher, "ht-child"))
                    # Its memories, chunk, entities and postings are written; only the bank's
                    # totals, the last statement of the transaction, are still to come.
                    assert _current_query(watcher, "ht-child").startswith("UPDATE banks")
                    child.send_signal(signal.SIGKILL)
                    child.wait(timeout=30)
            finally:
                child.kill()  # a no-op after the SIGKILL; stops it if an assertion failed
        with psycopg.connect(url, autocommit=True) as db:
            # Once the lock is gone the server finds its client dead and rolls back.
            wait_for(lambda: backends(db, "ht-child") == 0)
            ids = {r[0] for r in db.execute("SELECT id FROM memory_units WHERE bank_id = 'killed'")}
            assert ids == {"parent", "child-committed"}
            for table in ("documents", "chunks", "memory_terms", "unit_entities", "memory_links"):
                assert rows_mentioning(db, table, "killed", "partial") == 0, table
            assert rows_mentioning(db, "entities", "killed", "Partial Person") == 0
        parent.retain("killed", [{"id": "after", "text": "The bank is not left locked"}])
        server_pid = postmaster_pid(own_data_dir)
        assert server_pid is not None
        handles = json.loads((pgdata_for(own_data_dir) / ".handle_pids.json").read_text())
        assert child.pid in handles  # the dead child is still listed as a user of the server
    finally:
        parent.close()
    assert _gone(server_pid)  # stopped all the same
    with MemoryEngine(settings=own) as again:  # and the data survived the restart
        found = again.recall("killed", "Committed before the kill").memories
        assert "child-committed" in {m.id for m in found}
        assert again.delete_bank("killed")


def _current_query(db: Conn, application_name: str) -> str:
    row = db.execute(
        "SELECT query FROM pg_stat_activity WHERE application_name = %s",
        (application_name,),
    ).fetchone()
    assert row is not None
    return str(row[0]).lstrip()


def _gone(pid: int) -> bool:
    try:
        wait_for(
            lambda: (
                not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
            ),
            timeout=30,
        )
    except AssertionError:
        return False
    return True

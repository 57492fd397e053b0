"""Helpers for the fault tests: holding a retain mid-transaction, restarting the server."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from hindsight_tools.store import embedded

Conn = psycopg.Connection[tuple[Any, ...]]


def wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"still waiting after {timeout} s"
        time.sleep(0.05)


@contextmanager
def bank_row_held(url: str, bank: str) -> Iterator[Conn]:
    """Hold the bank's row: a retain into it writes its memories, then waits at its last
    statement (the bank's totals), inside its open transaction."""
    conn = psycopg.connect(url)
    try:
        conn.execute("SELECT 1 FROM banks WHERE bank_id = %s FOR NO KEY UPDATE", (bank,))
        yield conn
    finally:
        with contextlib.suppress(psycopg.OperationalError):
            conn.rollback()  # fails when the server went away under it, as some tests intend
        conn.close()


@contextmanager
def table_locked(url: str, table: str) -> Iterator[Callable[[], None]]:
    """Lock ``table`` against every reader; yields a function that lets go early."""
    conn = psycopg.connect(url)
    release = threading.Lock()

    def let_go() -> None:
        with release:
            if not conn.closed:
                conn.rollback()
                conn.close()

    try:
        conn.execute(
            sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(sql.Identifier(table))
        )
        yield let_go
    finally:
        let_go()


def waiting_on_a_lock(db: Conn, application_name: str | None = None) -> bool:
    """Whether a backend (of ``application_name``, or any) waits for a lock."""
    row = db.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
        "AND (%(name)s::text IS NULL OR application_name = %(name)s)",
        {"name": application_name},
    ).fetchone()
    return row is not None and row[0] > 0


def rows_mentioning(db: Conn, table: str, bank: str, needle: str) -> int:
    """Rows of ``bank`` in ``table`` whose text form contains ``needle``."""
    query = sql.SQL("SELECT count(*) FROM {} t WHERE bank_id = %s AND t::text LIKE %s").format(
        sql.Identifier(table)
    )
    row = db.execute(query, (bank, f"%{needle}%")).fetchone()
    assert row is not None
    return int(row[0])


def backends(db: Conn, application_name: str) -> int:
    row = db.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
        (application_name,),
    ).fetchone()
    assert row is not None
    return int(row[0])


def named(url: str, application_name: str) -> str:
    """``url`` with an application name, to find its connections in pg_stat_activity."""
    return psycopg.conninfo.make_conninfo(url, application_name=application_name)


def stop_server(data_dir: Path) -> None:
    """A fast shutdown, as an operator's restart does: every backend is terminated."""
    server = embedded._servers[embedded.pgdata_for(data_dir)]
    module = embedded._postgres_module()
    module.postgres_server.pg_ctl(
        ["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user
    )


def start_server(data_dir: Path) -> None:
    server = embedded._servers[embedded.pgdata_for(data_dir)]
    with server._lock:
        server.ensure_postgres_running()

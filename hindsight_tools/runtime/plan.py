"""Sans-I/O plans: the engine's logic is written once as generators of SQL statements.

A plan yields :class:`Statement` objects and receives each one's rows back; it never touches
a connection. :func:`run_plan` and :func:`arun_plan` are the only twins: they drive a plan
on a sync or an async psycopg connection inside one transaction, so a plan that raises (or a
statement that fails) leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import psycopg
from psycopg import sql

from hindsight_tools.errors import StoreError

T = TypeVar("T")
Row = tuple[Any, ...]
Rows = list[Row]
Query = str | sql.Composable
# Transaction-local: a limit set this way ends with the plan's transaction.
SET_STATEMENT_TIMEOUT = "SELECT set_config('statement_timeout', %(ms)s, true)"


@dataclass(frozen=True)
class Statement:
    """One SQL statement with named parameters.

    ``mode`` says what the plan gets back: ``rows`` (all rows), ``none`` (an empty list), or
    ``many`` (``params`` is a sequence of parameter sets, run with ``executemany``), or
    ``copy`` (``query`` is a ``COPY … FROM STDIN`` and ``params`` the sequence of rows it
    reads, each a tuple in the statement's column order; with ``copy_types``, the PostgreSQL
    types of those columns, the statement says ``FORMAT BINARY`` and values go unformatted).
    ``cancellable``: the statement runs in a savepoint, and if it is cancelled (statement
    timeout) the plan gets :class:`Cancelled` back instead of the transaction failing.
    ``binary``: results come in PostgreSQL's binary format; for large ``bytea`` values,
    which the text format would send as hex for the client to decode.
    """

    query: Query
    params: Mapping[str, Any] | Sequence[Mapping[str, Any]] | Sequence[Row] | None = None
    mode: Literal["rows", "none", "many", "copy"] = "rows"
    cancellable: bool = False
    binary: bool = False
    copy_types: tuple[str, ...] = ()


class Cancelled(list[Row]):
    """The rows of a ``cancellable`` statement that hit its time limit: none."""


Plan = Generator[Statement, Rows, T]


def with_statement_timeout(plan: Plan[T], seconds: float) -> Plan[T]:
    """``plan`` with each of its statements limited to ``seconds`` (0: no limit).

    The limit is set for the plan's transaction only, so it never leaks into the pooled
    connection's next use.
    """
    if seconds > 0:
        ms = str(max(round(seconds * 1000), 1))
        yield Statement(SET_STATEMENT_TIMEOUT, {"ms": ms}, "none")
    return (yield from plan)


def _store_error(exc: psycopg.Error, connection_lost: bool) -> StoreError:
    detail = exc.diag.message_primary or str(exc).strip()
    what = f"{type(exc).__name__}: {detail}"
    if connection_lost:
        return StoreError(
            f"lost the connection to PostgreSQL during this call ({what}); the call did not "
            "complete (if the connection dropped during the commit itself the write may have "
            "landed: a retain with ids is safe to repeat); later calls reconnect"
        )
    if isinstance(exc, psycopg.errors.QueryCanceled) and "statement timeout" in detail:
        return StoreError(
            f"PostgreSQL cancelled a statement at its time limit ({what}); recall statements "
            "are limited by HINDSIGHT_API_RECALL_STATEMENT_TIMEOUT"
        )
    return StoreError(f"PostgreSQL error ({what})")


def _execute(cur: psycopg.Cursor[Row], stmt: Statement) -> Rows:
    if stmt.cancellable:
        try:
            with cur.connection.transaction():
                return _run(cur, stmt)
        except psycopg.errors.QueryCanceled:
            return Cancelled()
    return _run(cur, stmt)


async def _aexecute(cur: psycopg.AsyncCursor[Row], stmt: Statement) -> Rows:
    if stmt.cancellable:
        try:
            async with cur.connection.transaction():
                return await _arun(cur, stmt)
        except psycopg.errors.QueryCanceled:
            return Cancelled()
    return await _arun(cur, stmt)


def _run(cur: psycopg.Cursor[Row], stmt: Statement) -> Rows:
    if stmt.mode == "copy":
        with cur.copy(stmt.query) as copy:  # type: ignore[arg-type]
            if stmt.copy_types:
                copy.set_types(list(stmt.copy_types))
            for row in stmt.params or ():
                copy.write_row(row)  # type: ignore[arg-type]
        return []
    if stmt.mode == "many":
        cur.executemany(stmt.query, stmt.params or [])  # type: ignore[arg-type]
        return []
    cur.execute(stmt.query, stmt.params, binary=stmt.binary)  # type: ignore[arg-type]
    return cur.fetchall() if stmt.mode == "rows" and cur.description is not None else []


async def _arun(cur: psycopg.AsyncCursor[Row], stmt: Statement) -> Rows:
    if stmt.mode == "copy":
        async with cur.copy(stmt.query) as copy:  # type: ignore[arg-type]
            if stmt.copy_types:
                copy.set_types(list(stmt.copy_types))
            for row in stmt.params or ():
                await copy.write_row(row)  # type: ignore[arg-type]
        return []
    if stmt.mode == "many":
        await cur.executemany(stmt.query, stmt.params or [])  # type: ignore[arg-type]
        return []
    await cur.execute(stmt.query, stmt.params, binary=stmt.binary)  # type: ignore[arg-type]
    return await cur.fetchall() if stmt.mode == "rows" and cur.description is not None else []


def run_plan(conn: psycopg.Connection[Row], plan: Plan[T]) -> T:
    """Drive ``plan`` on a sync connection in one transaction."""
    try:
        with conn.transaction(), conn.cursor() as cur:
            rows: Rows | None = None
            while True:
                try:
                    stmt = plan.send(rows) if rows is not None else next(plan)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
                rows = _execute(cur, stmt)
    except psycopg.Error as exc:
        raise _store_error(exc, conn.broken) from exc
    finally:
        plan.close()


async def arun_plan(conn: psycopg.AsyncConnection[Row], plan: Plan[T]) -> T:
    """Drive ``plan`` on an async connection in one transaction."""
    try:
        async with conn.transaction(), conn.cursor() as cur:
            rows: Rows | None = None
            while True:
                try:
                    stmt = plan.send(rows) if rows is not None else next(plan)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
                rows = await _aexecute(cur, stmt)
    except psycopg.Error as exc:
        raise _store_error(exc, conn.broken) from exc
    finally:
        plan.close()

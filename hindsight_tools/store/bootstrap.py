"""Connecting to PostgreSQL: required extensions, versioned migrations, connection pools."""

from __future__ import annotations

from importlib import resources
from typing import Any

import psycopg
from pgvector.psycopg import register_vector, register_vector_async
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from hindsight_tools.errors import MissingExtensionError, SchemaMismatchError, StoreError
from hindsight_tools.runtime.plan import run_plan
from hindsight_tools.settings import Settings
from hindsight_tools.store.deferred_indexes import (
    build_indexes_plan,
    missing_indexes_plan,
)

# (extension, minimum version, what it is for): checked on every start.
REQUIRED_EXTENSIONS = (
    ("vector", (0, 8), "pgvector, for embeddings and HNSW search"),
    ("pg_trgm", (1, 0), "trigram matching of entity names"),
)
# (version, file) in order; a file is applied once, recorded in hindsight_schema_version.
MIGRATIONS = (
    (1, "0001_core.sql"),
    (2, "0002_bm25.sql"),
    (3, "0003_bm25_postings.sql"),
    (4, "0004_semantic_partial_indexes.sql"),
    (5, "0005_event_range_index.sql"),
    (6, "0006_token_vectors.sql"),
    (7, "0007_metadata_filter.sql"),
    (8, "0008_bank_keys.sql"),
    (9, "0009_links_without_foreign_keys.sql"),
    (10, "0010_links_without_from_index.sql"),
    (11, "0011_postings_and_mentions_without_foreign_keys.sql"),
    (12, "0012_analyze_after_one_percent.sql"),
    (13, "0013_token_vectors_in_context.sql"),
    (14, "0014_document_positions.sql"),
)
# Arbitrary constant: serialises concurrent migrations from several processes.
_MIGRATIONS_PACKAGE = "hindsight_tools.store.migrations"
_MIGRATION_LOCK = 7_171_130_424


def redact(conninfo: str) -> str:
    """The connection string without its password, for error messages."""
    try:
        params = psycopg.conninfo.conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError:
        return "<unparsable connection string>"
    return " ".join(f"{key}={value}" for key, value in params.items() if key != "password")


def bootstrap(
    conninfo: str, dimension: int, model: str | None = None, index_memory: str = "1GB"
) -> list[int]:
    """Make the database ready: extensions present, schema migrated, vector indexes there
    (an import that set them aside and was cut short leaves them missing; they are built
    with ``index_memory`` of maintenance_work_mem). Returns the versions applied.

    With ``model`` (the embedder's name) the store also remembers which model wrote its
    vectors and refuses another one: two models of the same dimension would otherwise
    compare unlike vectors without any error.
    """
    try:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            ensure_extensions(conn, conninfo)
            return apply_migrations(conn, dimension, model, index_memory)
    except psycopg.OperationalError as exc:
        raise StoreError(f"cannot connect to PostgreSQL at {redact(conninfo)}: {exc}") from exc


def ensure_extensions(conn: psycopg.Connection[Any], conninfo: str) -> None:
    for name, minimum, purpose in REQUIRED_EXTENSIONS:
        installed = _installed_version(conn, name)
        if installed is None:
            try:
                conn.execute(
                    sql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(sql.Identifier(name))
                )
            except psycopg.Error as exc:
                raise MissingExtensionError(
                    f"PostgreSQL extension {name!r} ({purpose}) is missing on "
                    f"{redact(conninfo)} and could not be created: "
                    f"{exc.diag.message_primary or exc}. Install it on the server (or have a "
                    f"superuser run CREATE EXTENSION {name}) and try again."
                ) from exc
            installed = _installed_version(conn, name)
        if installed is not None and _version_tuple(installed) < minimum:
            raise MissingExtensionError(
                f"PostgreSQL extension {name!r} is version {installed}; hindsight-tools needs "
                f"{'.'.join(map(str, minimum))} or later ({purpose})."
            )


def _installed_version(conn: psycopg.Connection[Any], name: str) -> str | None:
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = %s", (name,)).fetchone()
    return None if row is None else str(row[0])


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def apply_migrations(
    conn: psycopg.Connection[Any],
    dimension: int,
    model: str | None = None,
    index_memory: str = "1GB",
) -> list[int]:
    applied_now: list[int] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS hindsight_schema_version ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.execute(
            "CREATE TABLE IF NOT EXISTS hindsight_meta (key text PRIMARY KEY, value text NOT NULL)"
        )
        stored = int(_recorded(conn, "embedding_dimension", str(dimension)))
        if stored != dimension:
            raise SchemaMismatchError(
                f"this store holds {stored}-dimensional embeddings but the configured model "
                f"makes {dimension}-dimensional ones; use the original model "
                "(HINDSIGHT_API_EMBEDDINGS_MODEL) or another database/data dir"
            )
        # A store from before this record, or a new one, takes the first model that opens it.
        if model is not None and (writer := _recorded(conn, "embedding_model", model)) != model:
            raise SchemaMismatchError(
                f"this store's embeddings were made by {writer!r} but the configured model is "
                f"{model!r}; vectors of different models can't be compared. Use "
                f"HINDSIGHT_API_EMBEDDINGS_MODEL={writer}, or another database/data dir and "
                "retain the memories there again"
            )
        done = {v for (v,) in conn.execute("SELECT version FROM hindsight_schema_version")}
        # A newer engine's schema may rely on that engine's code: from migration 0009 on,
        # forgetting deletes links itself, and an older engine would leave them behind.
        unknown = sorted(done - {version for version, _ in MIGRATIONS})
        if unknown:
            raise SchemaMismatchError(
                f"this store has schema versions {unknown} that this version of "
                f"hindsight-tools doesn't know (it knows up to {MIGRATIONS[-1][0]}): a newer "
                "version migrated it. Upgrade hindsight-tools, or use another database/data dir"
            )
        for version, filename in MIGRATIONS:
            if version in done:
                continue
            text = resources.files(_MIGRATIONS_PACKAGE).joinpath(filename).read_text()
            conn.execute(sql.SQL(text).format(dimension=sql.Literal(dimension)))
            conn.execute(
                "INSERT INTO hindsight_schema_version (version, name) VALUES (%s, %s)",
                (version, filename),
            )
            applied_now.append(version)
        # Under the migration lock, so that two engines opening at once build each once.
        missing = run_plan(conn, missing_indexes_plan())
        if missing:
            run_plan(conn, build_indexes_plan(missing, index_memory))
    return applied_now


def _recorded(conn: psycopg.Connection[Any], key: str, value: str) -> str:
    """The store's value for ``key``; ``value`` is recorded first if it has none."""
    conn.execute("INSERT INTO hindsight_meta VALUES (%s, %s) ON CONFLICT DO NOTHING", (key, value))
    row = conn.execute("SELECT value FROM hindsight_meta WHERE key = %s", (key,)).fetchone()
    return value if row is None else str(row[0])


def _connection_options(settings: Settings) -> dict[str, Any]:
    """psycopg's options for pooled connections: none, or no prepared statements."""
    return {} if settings.prepared_statements else {"prepare_threshold": None}


def open_pool(conninfo: str, settings: Settings) -> ConnectionPool[psycopg.Connection[Any]]:
    pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
        conninfo,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        timeout=settings.pool_timeout,
        configure=register_vector,
        kwargs=_connection_options(settings),
        # A connection the server dropped (restart, failover, idle kill) is found and
        # replaced when it is taken from the pool, instead of failing the next call.
        check=ConnectionPool.check_connection,
        name="hindsight",
        open=False,
    )
    try:
        pool.open(wait=True, timeout=settings.pool_timeout)
    except PoolTimeout as exc:
        pool.close()
        raise StoreError(_unreachable(conninfo, settings)) from exc
    return pool


async def open_async_pool(
    conninfo: str, settings: Settings
) -> AsyncConnectionPool[psycopg.AsyncConnection[Any]]:
    pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] = AsyncConnectionPool(
        conninfo,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        timeout=settings.pool_timeout,
        configure=register_vector_async,
        kwargs=_connection_options(settings),
        check=AsyncConnectionPool.check_connection,
        name="hindsight-async",
        open=False,
    )
    try:
        await pool.open(wait=True, timeout=settings.pool_timeout)
    except PoolTimeout as exc:
        await pool.close()
        raise StoreError(_unreachable(conninfo, settings)) from exc
    return pool


def _unreachable(conninfo: str, settings: Settings) -> str:
    return (
        f"could not open {settings.pool_min_size} connection(s) to PostgreSQL at "
        f"{redact(conninfo)} within {settings.pool_timeout:g} s (HINDSIGHT_API_POOL_TIMEOUT)"
    )

"""One embedded PostgreSQL and one real embedding model per test session; a fresh bank per test.

The suite never uses a database configured for real use: every ``HINDSIGHT_API_*`` variable
is dropped from the environment when this module is imported, before any ``Settings`` is
built and before any subprocess copies ``os.environ``, so each session starts its own
embedded server in a temporary folder. To run the suite against a database of your own
instead, name it in ``HINDSIGHT_TEST_DATABASE_URL``: the suite then uses that one (and
deletes banks in it), for the session's engine and for the processes it starts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.store.deferred_indexes import DEFERRED_INDEXES

TEST_DATABASE_URL_VARIABLE = "HINDSIGHT_TEST_DATABASE_URL"
SETTINGS_PREFIX = "HINDSIGHT_API_"


def _isolate_from_the_users_configuration() -> str | None:
    """Drop every ``HINDSIGHT_API_*`` variable; the test database to use, if one is named.

    Settings read all of them (an exported ``HINDSIGHT_API_DATABASE_URL`` would send the
    suite, and its bank deletions, to that database), and the CLI, MCP, README and notebook
    tests start processes with a copy of this environment. Tests that want a variable set it
    themselves (``monkeypatch.setenv``, or the ``env`` of the process they start).
    """
    # Settings match names case-insensitively: hindsight_api_database_url counts too.
    for name in [name for name in os.environ if name.upper().startswith(SETTINGS_PREFIX)]:
        del os.environ[name]
    url = os.environ.get(TEST_DATABASE_URL_VARIABLE) or None
    if url is not None:
        # the processes the tests start then join the same database as the session's engine
        os.environ[f"{SETTINGS_PREFIX}DATABASE_URL"] = url
    return url


TEST_DATABASE_URL = _isolate_from_the_users_configuration()


@pytest.fixture(scope="session")
def data_dir() -> Iterator[Path]:
    # Short and outside /root: the server's socket lives here, and as root its parents
    # are opened to the server's system user.
    path = Path(tempfile.mkdtemp(prefix="ht-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def settings(data_dir: Path) -> Settings:
    # database_url is always given, so nothing the environment says can pick the database
    return Settings(data_dir=data_dir, database_url=TEST_DATABASE_URL)


@pytest.fixture(scope="session")
def engine(settings: Settings) -> Iterator[MemoryEngine]:
    with MemoryEngine(settings=settings) as engine:
        yield engine


@pytest.fixture(scope="session")
def demo_bank(engine: MemoryEngine) -> str:
    """The bundled demo memories, retained once, for the tests that only recall from them."""
    from hindsight_tools.cli.demo import demo_items

    bank_id = "demo-read-only"
    engine.delete_bank(bank_id)
    engine.retain(bank_id, demo_items())
    return bank_id


@pytest.fixture
def bank(engine: MemoryEngine) -> Iterator[str]:
    bank_id = f"test-{uuid.uuid4().hex[:12]}"
    yield bank_id
    engine.delete_bank(bank_id)


@pytest.fixture
def other_bank(engine: MemoryEngine) -> Iterator[str]:
    """A second bank, to compare with ``bank``."""
    yield "import-twin"
    engine.delete_bank("import-twin")


@pytest.fixture
def db(engine: MemoryEngine) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
    """A plain connection to the engine's database, for looking at rows directly."""
    with psycopg.connect(engine.database_url, autocommit=True) as conn:
        yield conn


@pytest.fixture
def scratch_db(engine: MemoryEngine) -> Iterator[str]:
    """A new, empty database on the same server; its URL."""
    name = f"scratch_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(engine.database_url, autocommit=True) as conn:
        conn.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name)))
    params = psycopg.conninfo.conninfo_to_dict(engine.database_url)
    params["dbname"] = name
    yield psycopg.conninfo.make_conninfo(**params)  # type: ignore[arg-type]
    with psycopg.connect(engine.database_url, autocommit=True) as conn:
        conn.execute(
            psycopg.sql.SQL("DROP DATABASE {} WITH (FORCE)").format(psycopg.sql.Identifier(name))
        )


def count(db: psycopg.Connection[tuple[Any, ...]], table: str, bank_id: str) -> int:
    """Rows of ``bank_id`` in ``table`` (a fixed name from the tests, never user input)."""
    query = psycopg.sql.SQL("SELECT count(*) FROM {} WHERE bank_id = %s").format(
        psycopg.sql.Identifier(table)
    )
    row = db.execute(query, (bank_id,)).fetchone()
    assert row is not None
    return int(row[0])


BANK_TABLES = (
    "banks",
    "documents",
    "chunks",
    "memory_units",
    "memory_token_vectors",
    "entities",
    "unit_entities",
    "memory_links",
)


# Property tests call the real engine, so examples are few; `thorough` is for a long manual run
# (HINDSIGHT_HYPOTHESIS_PROFILE=thorough). The CI profile replays the same examples each run.
_HYPOTHESIS_CHECKS = [
    HealthCheck.function_scoped_fixture,
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.large_base_example,
]
hypothesis_settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=_HYPOTHESIS_CHECKS,
)
hypothesis_settings.register_profile(
    "thorough",
    max_examples=500,
    deadline=None,
    database=None,
    suppress_health_check=_HYPOTHESIS_CHECKS,
)
hypothesis_settings.load_profile(os.environ.get("HINDSIGHT_HYPOTHESIS_PROFILE", "ci"))


_DEFERRED_INDEXES = """
SELECT indexname, indexdef FROM pg_indexes
WHERE schemaname = current_schema() AND indexname = ANY(%s) ORDER BY indexname
"""


def deferred_indexes(db: psycopg.Connection[tuple[Any, ...]]) -> list[tuple[str, str]]:
    """The store's indexes an import may set aside (name, definition) that are there."""
    rows = db.execute(_DEFERRED_INDEXES, (list(DEFERRED_INDEXES),)).fetchall()
    return [(str(name), str(definition)) for name, definition in rows]

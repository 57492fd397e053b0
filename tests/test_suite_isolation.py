"""The suite keeps away from a database the user configured.

Each test runs ``tests/isolation_probe.py`` in a pytest process of its own, with the
environment a user of the engine might have exported: ``HINDSIGHT_API_DATABASE_URL`` naming
a real database (a second one on this session's server, holding a marker bank) and other
``HINDSIGHT_API_*`` settings. The probe retains and deletes banks, the marker bank among them,
as tests do; afterwards the decoy must be exactly as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from hindsight_tools import MemoryEngine, Settings
from tests.conftest import TEST_DATABASE_URL_VARIABLE, count
from tests.isolation_probe import MARKER_VARIABLE, REPORT_VARIABLE

REPO = Path(__file__).resolve().parents[1]
PROBE = Path(__file__).with_name("isolation_probe.py")
MARKER_BANK = "users-own-bank"


@contextlib.contextmanager
def server_database(db: psycopg.Connection[tuple[Any, ...]], engine: MemoryEngine) -> Iterator[str]:
    """A new, empty database on the session's server; its conninfo. Dropped afterwards."""
    name = f"isolation_{uuid.uuid4().hex[:10]}"
    db.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield psycopg.conninfo.make_conninfo(engine.database_url, dbname=name)
    finally:
        db.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def decoy(
    db: psycopg.Connection[tuple[Any, ...]], engine: MemoryEngine, settings: Settings
) -> Iterator[str]:
    """The user's database: the engine's schema and one bank with one memory."""
    with server_database(db, engine) as url:
        quick = settings.with_overrides({"reranker_provider": "passthrough"})
        with MemoryEngine(url, settings=quick) as users_engine:
            users_engine.retain(MARKER_BANK, [{"text": "Kept by the user, not by the tests"}])
        yield url


@pytest.fixture
def test_database(db: psycopg.Connection[tuple[Any, ...]], engine: MemoryEngine) -> Iterator[str]:
    with server_database(db, engine) as url:
        yield url


def users_environment(decoy: str, tmp_path: Path) -> dict[str, str]:
    """This process's environment plus what a user of the engine might have exported."""
    env = {name: value for name, value in os.environ.items() if name != TEST_DATABASE_URL_VARIABLE}
    env.update(
        {
            "HINDSIGHT_API_DATABASE_URL": decoy,
            # lower case counts too: the settings match names case-insensitively
            "hindsight_api_data_dir": str(tmp_path / "users-data-dir"),
            "HINDSIGHT_API_RECALL_BUDGET_FUNCTION": "adaptive",
            MARKER_VARIABLE: MARKER_BANK,
            REPORT_VARIABLE: str(tmp_path / "probe.json"),
        }
    )
    return env


def settings_seen_by(env: dict[str, str]) -> str:
    """The database ``Settings()`` picks in a plain process with ``env``."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from hindsight_tools import Settings; print(Settings().database_url)",
        ],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def run_probe(env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(PROBE)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "1 passed" in done.stdout
    report: dict[str, Any] = json.loads(Path(env[REPORT_VARIABLE]).read_text())
    return report


def assert_untouched(decoy: str) -> None:
    with psycopg.connect(decoy, autocommit=True) as conn:
        banks = [row[0] for row in conn.execute("SELECT bank_id FROM banks ORDER BY bank_id")]
        assert banks == [MARKER_BANK]
        assert count(conn, "memory_units", MARKER_BANK) == 1


def test_the_suite_runs_on_its_own_server_whatever_the_environment_says(
    decoy: str, db: psycopg.Connection[tuple[Any, ...]], tmp_path: Path
) -> None:
    env = users_environment(decoy, tmp_path)
    # the premise: without the suite's guard, this environment means the decoy
    assert settings_seen_by(env) == decoy

    report = run_probe(env)

    assert_untouched(decoy)
    session_server = db.execute("SHOW data_directory").fetchone()
    assert session_server is not None
    # its own embedded server: neither the decoy's server nor the user's data dir
    assert report["data_directory"] != session_server[0]
    assert not (tmp_path / "users-data-dir").exists()
    assert report["settings_database_url"] is None
    assert report["fresh_database_url"] is None
    assert report["fresh_recall_budget_function"] == "fixed"
    assert report["environment"] == []


def test_a_named_test_database_is_used_instead(
    decoy: str, test_database: str, db: psycopg.Connection[tuple[Any, ...]], tmp_path: Path
) -> None:
    env = {**users_environment(decoy, tmp_path), TEST_DATABASE_URL_VARIABLE: test_database}

    report = run_probe(env)

    assert_untouched(decoy)
    test_name = psycopg.conninfo.conninfo_to_dict(test_database)["dbname"]
    session_server = db.execute("SHOW data_directory").fetchone()
    assert session_server is not None
    assert (report["database"], report["data_directory"]) == (test_name, session_server[0])
    assert report["settings_database_url"] == test_database
    # the processes tests start, and the README examples, join the same database
    assert report["fresh_database_url"] == test_database
    assert report["environment"] == ["HINDSIGHT_API_DATABASE_URL"]
    with psycopg.connect(test_database, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM banks").fetchone() == (0,)  # cleaned up

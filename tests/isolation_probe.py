"""The inner test of ``tests/test_suite_isolation.py``, run there in a pytest process of its own.

Not part of the suite (pytest collects only ``test_*.py``); the outer test names this file on
the command line. It does to its database what the suite does, a retain and bank deletions
(the marker bank of the decoy database among them), and writes down where it was connected
and what a fresh ``Settings()`` would read, for the outer test to check.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import psycopg
import pytest

from hindsight_tools import MemoryEngine, Settings

REPORT_VARIABLE = "ISOLATION_PROBE_REPORT"
MARKER_VARIABLE = "ISOLATION_PROBE_MARKER_BANK"


def test_probe(engine: MemoryEngine, settings: Settings, bank: str) -> None:
    report = os.environ.get(REPORT_VARIABLE)
    if report is None:
        pytest.skip(f"run by tests/test_suite_isolation.py, which sets {REPORT_VARIABLE}")
    engine.retain(bank, [{"text": "The isolation probe retained this"}])
    # what a test's teardown does; on the decoy it would wipe the user's bank
    engine.delete_bank(os.environ[MARKER_VARIABLE])
    with psycopg.connect(engine.database_url) as conn:
        row = conn.execute(
            "SELECT current_database(), current_setting('data_directory')"
        ).fetchone()
    assert row is not None
    fresh = Settings()  # what the README examples and the processes tests start would build
    Path(report).write_text(
        json.dumps(
            {
                "database": row[0],
                "data_directory": row[1],
                "settings_database_url": settings.database_url,
                "fresh_database_url": fresh.database_url,
                "fresh_recall_budget_function": fresh.recall_budget_function,
                "environment": sorted(
                    name for name in os.environ if name.upper().startswith("HINDSIGHT_API_")
                ),
            }
        )
    )

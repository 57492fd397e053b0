"""The load script (``benchmarks/load.py``): a short run against the real engine."""

from __future__ import annotations

import uuid

import pytest

from benchmarks.load import main, run_load, verify
from hindsight_tools import MemoryEngine
from hindsight_tools.cli.demo import demo_items
from tests.conftest import count
from tests.faults import Conn


def test_a_short_run_has_no_errors_and_every_acknowledged_retain_is_stored(
    engine: MemoryEngine, db: Conn
) -> None:
    bank = f"load-{uuid.uuid4().hex[:8]}"
    try:
        report = run_load(engine, bank, seconds=2, threads=2, tasks=2, retain_every=2)
        assert report.ok, "\n".join(report.lines())
        assert set(report.latencies) == {
            "recall (threads)",
            "retain (threads)",
            "recall (async)",
            "retain (async)",
        }
        assert report.acknowledged >= 4  # every worker retained at least once
        assert count(db, "memory_units", bank) == len(demo_items()) + report.acknowledged
    finally:
        engine.delete_bank(bank)


def test_verification_names_lost_and_altered_memories(engine: MemoryEngine, bank: str) -> None:
    engine.retain(
        bank,
        [
            {"id": "kept", "text": "Aiko ran a half marathon in Osaka, entry x1"},
            {"id": "altered", "text": "Lena adopted a cat in Quito, entry x2"},
        ],
    )
    acknowledged = {
        "kept": "Aiko ran a half marathon in Osaka, entry x1",
        "lost": "Marco started a new job in Lisbon, entry x3",
        "altered": "Lena adopted a dog in Quito, entry x2",
    }
    assert verify(engine, bank, acknowledged) == ["lost", "altered"]


def test_the_command_line_reports_and_exits_zero(
    engine: MemoryEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--seconds", "1", "--threads", "1", "--tasks", "1", "--retain-every", "2"]
    assert main([*argv, "--database-url", engine.database_url]) == 0
    out = capsys.readouterr().out
    assert "1 threads + 1 async tasks" in out
    assert "errors: 0" in out and "missing: 0" in out

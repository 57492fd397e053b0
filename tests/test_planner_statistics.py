"""The planner-statistics benchmark's arguments (benchmarks/planner_statistics.py). Its run
waits on autovacuum, whose timing the test suite's load makes unreliable, so it is a
benchmark, not a test; tests/test_store.py checks the setting it measures."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.planner_statistics import grown_bank, main


def test_an_unknown_threshold_is_named() -> None:
    with pytest.raises(ValueError, match="store, default.*'none'"):
        grown_bank(Path("unused"), big=1, grown=1, batches=1, threshold="none")
    with pytest.raises(SystemExit):
        main(["--big", "-"])

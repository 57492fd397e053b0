"""The filter benchmark end to end on a tiny bank, on the session's PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from benchmarks.filter_bench import CONFIGS, HashingEmbedder, main, recorded_command
from hindsight_tools import MemoryEngine


def test_hashing_vectors_are_unit_deterministic_and_near_for_shared_words() -> None:
    embedder = HashingEmbedder(seed=1)
    a, a2, b = embedder.embed(
        ["Ana met Bo in Lima.", "Ana met Bo in Lima to bake bread.", "Kwame sold a kayak."]
    )
    assert np.allclose(np.linalg.norm([a, a2, b], axis=1), 1.0, atol=1e-5)
    assert np.array_equal(a, HashingEmbedder(seed=1).embed(["Ana met Bo in Lima."])[0])
    assert float(a @ a2) > 0.6 > float(a @ b)


def test_the_recorded_command_names_no_folder_of_this_machine() -> None:
    command = recorded_command(["--size", "10", "--data-dir", "/x/y", "--out", "/x/r.md"])
    assert command == (
        ".venv/bin/python benchmarks/filter_bench.py --size 10 --data-dir DIR --out FILE"
    )


@pytest.fixture
def own_database(engine: MemoryEngine) -> Iterator[str]:
    """A fresh database on the session's server: the store records its embedding model, and
    the benchmark's hashing vectors must not meet the real model's."""
    name = f"filter_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(engine.database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_conninfo(engine.database_url, dbname=name)
    finally:
        with psycopg.connect(engine.database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def test_a_tiny_run_reports_every_configuration_and_no_violation(
    own_database: str, tmp_path: Path
) -> None:
    out = tmp_path / "filters.md"
    argv = ["--size", "300", "--queries", "5", "--database-url", own_database]
    report = main([*argv, "--quiet", "--out", str(out)])
    assert out.read_text() == report + "\n"
    recall_table = report.split("## Recall", 1)[1].split("\n\n")[1].splitlines()
    rows = {line.split(" | ")[0].removeprefix("| "): line for line in recall_table[2:]}
    assert set(rows) == {c.name for c in CONFIGS}
    cells = {name: [c.strip() for c in line.strip("|").split("|")] for name, line in rows.items()}
    assert all(row[-1] == "0" for row in cells.values())  # violations
    # memories returned: a tiny bank has none of the selective user in the month, maybe
    assert float(cells["unfiltered"][-2]) > 0 and float(cells["broad metadata"][-2]) > 0
    assert "0 of " in report and "violate their filter" in report
    assert "One bank of **300 memories**" in report
    assert "## Plans with the selective filter" in report
    assert "broad, deep page" in report

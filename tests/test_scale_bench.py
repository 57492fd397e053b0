"""The scale benchmark: its stores end with the schema a migrated store has, and its report
at a tiny size says what the large runs must show."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import psycopg
import pytest

from benchmarks.scale_bench import SCHEMA, main, parse_args
from benchmarks.scale_store import LINK_INDEXES, VECTOR_INDEXES, put_back, set_aside
from hindsight_tools import MemoryEngine


def _schema(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    return conn.execute(SCHEMA).fetchall()


def test_what_a_load_sets_aside_is_put_back_as_it_was(scratch_db: str) -> None:
    with MemoryEngine(scratch_db):  # migrates the empty database
        pass
    with psycopg.connect(scratch_db, autocommit=True) as conn:
        before = _schema(conn)
        vectors = set_aside(conn, VECTOR_INDEXES)
        links = set_aside(conn, LINK_INDEXES)
        during = {name for _, name, _ in _schema(conn)}
        assert not during & {*VECTOR_INDEXES, *LINK_INDEXES}
        assert len(links.indexes) == len(LINK_INDEXES) and len(vectors.indexes) == len(
            VECTOR_INDEXES
        )
        put_back(conn, vectors)
        put_back(conn, links)
        assert _schema(conn) == before


def _row(report: str, store: str) -> list[str]:
    line = next(line for line in report.splitlines() if line.startswith(f"| {store} | "))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_scale_benchmark_builds_three_stores_and_reports_them(tmp_path: Path) -> None:
    report = main(
        ["--big", "400", "--banks", "6", "--bank-size", "30", "--queries", "4",
         "--warm-up", "2", "--server-setting", "shared_buffers=160MB",
         "--data-dir", str(tmp_path)]
    )  # fmt: skip
    # the server ran with the given setting, and each timed round came after the warm-up
    assert "(shared_buffers 160MB)" in report
    assert "after a round of 2 other questions about the same bank" in report
    assert "with no statement time limit" in report
    # 400 + three banks of 2,000; six banks of 30; the first of them alone
    assert _row(report, "one-big")[:4] == ["one-big", "4", "6,400", "big (400)"]
    assert _row(report, "many-small")[:4] == ["many-small", "6", "180", "small-00000 (30)"]
    assert _row(report, "alone")[:4] == ["alone", "1", "30", "small-00000 (30)"]
    summary = report.split("## Building the stores")[0]
    assert "NOT" not in summary and "DIFFERS" not in summary, summary
    assert "tables and indexes: " in report and "equal in every store" in report
    for store in ("many-small", "alone", "one-big"):
        built = f"- {store} after its build: the same indexes and constraints as a database"
        assert built in report, report
    assert re.search(r"many-small: mid p95 with passthrough [\d.]+ ms", report)
    assert re.search(r"a bank of 30 among 6 against the same bank alone \(passthrough\)", report)
    # every arm's plan is shown, and the keyword arm reads its postings by index
    for arm in ("semantic", "bm25", "graph", "temporal"):
        assert f"<summary>{arm} arm plan</summary>" in report
    bm25 = re.search(r"^\| bm25 \| ([^|]+) \|", report, re.M)
    assert bm25 and "memory_terms_pkey" in bm25.group(1), report
    # the stores hold links (made after the load), and a rerun reuses what it built
    one_big = report.split("## one-big:")[1]
    counts = re.search(
        r"- rows: ([\d,]+) semantic links, [\d,]+ temporal links, ([\d,]+) token vectors, "
        r"([\d,]+) readings in context",
        one_big,
    )
    assert counts and int(counts.group(1).replace(",", "")) > 400, one_big
    # every memory has late-interaction vectors and a reading in context, so recall reads
    # both as in a store of conversations
    assert int(counts.group(2).replace(",", "")) == 6400
    assert int(counts.group(3).replace(",", "")) == 6400
    assert "reading in context copied from a pool of 1,000 real encodings" in report
    again = main(
        ["--big", "400", "--banks", "6", "--bank-size", "30", "--queries", "4",
         "--shapes", "alone", "--data-dir", str(tmp_path), "--reuse"]
    )  # fmt: skip
    assert "alone (built by an earlier run)" in again


@pytest.mark.parametrize("flag", ["--big", "--banks", "--bank-size", "--queries"])
def test_a_store_or_question_count_below_one_is_refused_by_name(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse_args([flag, "0"])
    assert f"argument {flag}" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["shared_buffers", "=1GB", "shared_buffers="])
def test_a_server_setting_without_name_and_value_is_refused(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--server-setting", value])
    assert "expected NAME=VALUE" in capsys.readouterr().err


def test_a_negative_warm_up_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--warm-up", "-1"])
    assert "argument --warm-up" in capsys.readouterr().err

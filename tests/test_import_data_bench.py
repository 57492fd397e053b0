"""The real-data import benchmark end to end on the small LoCoMo-format sample, in a scratch
database of the session's server."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from benchmarks.import_bench import main as import_bench_main
from benchmarks.import_data_bench import main

SAMPLE = Path(__file__).parent / "data" / "mini-locomo" / "memories.jsonl"


def test_it_reports_both_paths_per_run_without_the_data(scratch_db: str, tmp_path: Path) -> None:
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    too_long = {"id": "long", "text": "word " * 4_001, "occurred_at": "2023-05-08T13:56:00"}
    data = tmp_path / "memories.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in [*records, too_long]) + "\n")

    report = main(
        ["sample=" + str(data), "--runs", "2", "--batch", "10", "--database-url", scratch_db]
    )

    row = re.search(
        r"^\| sample \| ([\d,]+) \| ([\d,]+) \| (\d+) \| \*\*([\d,]+)\*\* \| ([^|]+) \| "
        r"\*\*([\d,]+)\*\* \| ([^|]+) \|$",
        report,
        re.M,
    )
    assert row, report
    memories, characters, left_out = (int(row.group(i).replace(",", "")) for i in (1, 2, 3))
    assert (memories, left_out) == (len(records), 1)
    assert characters == round(sum(len(r["text"]) for r in records) / len(records))
    for runs in (row.group(5), row.group(7)):
        rates = [float(r.replace(",", "")) for r in runs.split(" / ")]
        assert len(rates) == 2 and all(r > 0 for r in rates)
    # figures only: no memory's text reaches the report
    assert not any(r["text"] in report for r in records)
    with psycopg.connect(scratch_db) as conn:  # each run's bank is gone again
        assert conn.execute("SELECT count(*) FROM banks").fetchone() == (0,)


@pytest.mark.parametrize(
    ("bench", "argv", "flag"),
    [
        (main, ["x=y.jsonl", "--runs", "0"], "--runs"),
        (main, ["x=y.jsonl", "--batch", "0"], "--batch"),
        (import_bench_main, ["--memories", "0"], "--memories"),
        (import_bench_main, ["--background", "-1"], "--background"),
    ],
)
def test_a_count_out_of_range_is_refused_by_name(
    bench: Callable[[list[str]], str],
    argv: list[str],
    flag: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        bench(argv)
    assert f"argument {flag}: must be an integer >=" in capsys.readouterr().err

"""`python -m benchmarks.compare --quick` end to end on a tiny LoCoMo-shaped slice: every system
for real (embedded PostgreSQL, the packaged models), a report row each, the plots written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.compare import OPTIONAL, SYSTEMS
from tests.test_evaluation import write_locomo

REPO = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_quick_comparison_writes_report_and_plots(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_locomo(data, "conv-a")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.compare", str(data), "--quick", "--out", str(out)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "recall:" in done.stderr  # the progress bars

    report = (out / "BENCHMARKS.md").read_text()
    results = json.loads((out / "benchmarks" / "results.json").read_text())
    expected = [key for key in SYSTEMS if key not in OPTIONAL]
    assert len(results) == len(expected)
    summary = report.split("## Summary", 1)[1].split("\n\n")[1].splitlines()
    assert len(summary) == 2 + len(expected)
    for name, result in results.items():
        assert any(line.startswith((f"| {name} |", f"| **{name}** |")) for line in summary)
        assert result["overall_no_adversarial"]["questions"] == 2
        assert result["latency"]["recalls"] == 3
        assert result["retain"]["memories"] == 5
    # five memories in the bank: the dense peers rank all of them, so all evidence is in the top 50
    for name in (
        "langchain-postgres dense",
        "llama-index-postgres hybrid (RRF)",
        "llama-index-postgres hybrid (RRF) + cross-encoder top 50",
    ):
        assert results[name]["overall_no_adversarial"]["recall"]["50"] == 1.0
    # the one single-hop question names its turn's rare words; keyword search must find it
    single_hop = next(c for c in results["bm25s"]["categories"] if c["category"] == 4)
    assert single_hop["recall"]["5"] == 1.0
    assert "python -m benchmarks.compare" in report
    for image in ("recall_at_k.png", "latency.png"):
        assert (out / "benchmarks" / image).read_bytes()[:8] == PNG_MAGIC

"""The keyword benchmark at a tiny size: exact agrees with itself, a small bound is taken."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchmarks.keyword_bench import main
from benchmarks.recall_bench_data import make_memories, make_vocabulary
from benchmarks.recall_bench_vectors import CompositeEmbedder
from benchmarks.scale_store import built_store
from hindsight_tools import Settings
from hindsight_tools.encoders.embedding import default_embedder


def _row(report: str, name: str) -> list[str]:
    line = next(line for line in report.splitlines() if line.startswith(f"| {name} | "))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_keyword_benchmark_sets_the_bounded_form_beside_the_exact_one(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path)
    embedder = CompositeEmbedder(default_embedder(settings.embeddings_model, 64), 7)
    banks = {"big": make_memories("big", 300, make_vocabulary(random.Random(7)), 7)}
    built_store(tmp_path, settings, embedder, banks, 7, reuse=False)

    store = ["--store", str(tmp_path), "--big", "300", "--queries", "6"]
    report = main([*store, "--bounds", "1", "--lookup-shares", "0", "inf"])
    exact = _row(report, "exact")
    joined = _row(report, "bound 1, late terms joined")
    looked_up = _row(report, "bound 1, late terms looked up")
    # exact is never bounded and is its own top
    assert exact[3:] == ["0", "0", "1.000", "1.000"]
    assert 1 <= int(joined[3]) <= 6 and joined[3] == looked_up[3]
    assert joined[4] == "0" and looked_up[4] == looked_up[3]
    assert all(0.0 <= float(share) <= 1.0 for share in joined[5:] + looked_up[5:])
    assert float(exact[1]) > 0 and float(joined[1]) > 0 and float(looked_up[1]) > 0
    with pytest.raises(SystemExit, match="no bank 'big' of 301 memories"):
        main(["--store", str(tmp_path), "--big", "301", "--queries", "1"])

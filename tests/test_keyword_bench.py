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


def _alone(report: str) -> list[str]:
    """The row of the bounded questions alone, for the bound of 1."""
    line = [line for line in report.splitlines() if line.startswith("| bound 1 | ")][-1]
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_keyword_benchmark_sets_the_bounded_form_beside_the_exact_one(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path)
    embedder = CompositeEmbedder(default_embedder(settings.embeddings_model, 64), 7)
    banks = {"big": make_memories("big", 300, make_vocabulary(random.Random(7)), 7)}
    built_store(tmp_path, settings, embedder, banks, 7, reuse=False)

    args = ["--store", str(tmp_path), "--big", "300", "--bounds", "1", "--queries", "6"]
    report = main(args)
    exact, bounded = _row(report, "exact"), _row(report, "bound 1")
    assert exact[3:] == ["0", "1.000", "1.000"]  # exact is never bounded and is its own top
    assert 1 <= int(bounded[3]) <= 6
    assert all(0.0 <= float(share) <= 1.0 for share in bounded[4:])
    assert float(exact[1]) > 0 and float(bounded[1]) > 0
    # the bounded questions alone: with a bound of 1, a rarest term in two memories or more
    # has its candidates cut
    questions, cut = (int(c) for c in _alone(report)[1::7])
    assert questions == int(bounded[3]) and 1 <= cut <= questions
    assert "(seed 7)" in report
    # other questions about the same bank: the same store, so exact is still its own top,
    # and the postings the questions read (a function of the questions alone) differ
    other = main([*args, "--question-seed", "8"])
    assert "(seed 8)" in other and _row(other, "exact")[3:] == ["0", "1.000", "1.000"]
    assert _alone(other)[6:8] != _alone(report)[6:8]
    with pytest.raises(SystemExit, match="no bank 'big' of 301 memories"):
        main(["--store", str(tmp_path), "--big", "301", "--queries", "1"])

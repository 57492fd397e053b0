"""The recall benchmark's pure parts: synthetic data, composite embeddings, overlap, its
arguments."""

from __future__ import annotations

import gc
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from benchmarks.recall_bench import parse_args, scale_of
from benchmarks.recall_bench_data import (
    NOW,
    TIME_EXPRESSIONS,
    fill,
    make_memories,
    make_questions,
    make_vocabulary,
)
from benchmarks.recall_bench_report import _arm_rows, _named
from benchmarks.recall_bench_timing import (
    BankLatency,
    RecallSample,
    overlap,
    percentile,
    settled_heap,
)
from benchmarks.recall_bench_vectors import CompositeEmbedder
from hindsight_tools.encoders.embedding import Vectors
from hindsight_tools.query.time_window import extract_time_window
from hindsight_tools.recall.arms.base import ARM_ORDER

REPO = Path(__file__).resolve().parents[1]


class HashEmbedder:
    """A stand-in for the real model: a fixed random unit vector per text."""

    name = "hash"
    dimension = 16

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        rows = [np.random.default_rng(list(t.encode())).normal(size=16) for t in texts]
        return np.array([r / np.linalg.norm(r) for r in rows], dtype=np.float32)


def test_memories_are_deterministic_and_mixed() -> None:
    vocab = make_vocabulary(random.Random(7))
    first = make_memories("bank", 400, vocab, seed=7)
    assert first == make_memories("bank", 400, vocab, seed=7)
    assert first != make_memories("bank", 400, vocab, seed=8)
    assert len({m.id for m in first}) == 400
    types = Counter(m.fact_type for m in first)
    assert set(types) == {"world", "experience", "observation"}
    assert all(2022 <= m.occurred_start.year <= 2024 for m in first)


def test_every_time_expression_names_a_window() -> None:
    for expression in TIME_EXPRESSIONS:
        assert extract_time_window(f"What did Priya Nair do {expression}?", NOW) is not None


def test_a_quarter_of_questions_name_a_time() -> None:
    vocab = make_vocabulary(random.Random(7))
    questions = make_questions(make_memories("b", 200, vocab, 7), 40, vocab, 7)
    timed = [q for q in questions if q.timed]
    assert len(timed) == 10
    assert all(extract_time_window(q.text, NOW) is not None for q in timed)


def test_fill_returns_the_generic_frame_then_the_fillers() -> None:
    text, parts = fill("{a} met {b} in {city}.", {"a": "Ana", "b": "Bo", "city": "Lima"})
    assert text == "Ana met Bo in Lima."
    assert parts == ("someone met someone else in a city.", "Ana", "Bo", "Lima")


def test_composite_vectors_are_unit_deterministic_and_clustered() -> None:
    real = HashEmbedder()
    embedder = CompositeEmbedder(real, seed=1)
    embedder.register("Ana in Lima", ("frame", "Ana", "Lima"))
    embedder.register("Ana, Lima", ("frame", "Ana", "Lima"))
    embedder.register("Bo in Oslo", ("frame", "Bo", "Oslo"))
    embedder.register("Where is Ana?", ("question", "Ana"), question=True)
    a, a2, b = embedder.embed(["Ana in Lima", "Ana, Lima", "Bo in Oslo"])
    assert np.allclose(np.linalg.norm([a, a2, b], axis=1), 1.0, atol=1e-5)
    assert np.array_equal(a, embedder.embed(["Ana in Lima"])[0])
    assert not np.array_equal(a, a2)  # same components, different text: close, not equal
    assert float(a @ a2) > 0.9 > float(a @ b)

    real.calls.clear()
    embedder.embed(["Where is Ana?"])
    assert real.calls == [["Where is Ana?"]]  # a question pays one real-model pass
    embedder.vectors(["Where is Ana?"])
    assert real.calls == [["Where is Ana?"]]


def test_overlap_compares_the_top_k_by_similarity() -> None:
    exact = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    assert overlap([("b", 0.8), ("a", 0.9)], exact, 2) == 1.0
    assert overlap([("a", 0.9), ("c", 0.7)], exact, 2) == 0.5
    assert overlap([], [], 5) == 1.0


def test_side_by_side_encoders_count_once_in_the_named_stages() -> None:
    # embed and late_interaction_query overlap: the slower one is their wall time
    stages = {"embed": 0.010, "late_interaction_query": 0.007, "arms": 0.020, "total": 0.050}
    assert _named(stages) == pytest.approx(0.030)
    assert _named({"late_interaction_query": 0.004, "rerank": 0.1}) == pytest.approx(0.104)


def test_each_arm_shows_its_median_and_its_tail() -> None:
    # keyword arm: 19 quick runs and one slow one; the graph arm never ran
    samples = [
        RecallSample(
            0.1, {}, {"bm25": (0.010 if i < 19 else 0.400, 300 + i), "semantic": (0.05, 900)}
        )
        for i in range(20)
    ]
    result = BankLatency("big", 1000, 20, 0, recall={"mid": samples})
    (row,) = _arm_rows(result)
    cells = dict(zip(["budget", *ARM_ORDER], row, strict=True))
    assert cells["budget"] == "recall mid"
    assert cells["semantic"] == "50.0 / 50.0 (900, 20)"
    p95 = percentile([0.010] * 19 + [0.400], 95) * 1000
    assert cells["bm25"] == f"10.0 / {p95:.1f} (310, 20)"
    assert p95 > 10.0
    assert cells["graph"] == cells["temporal"] == "–"


def test_percentile() -> None:
    assert percentile([1.0, 2.0, 3.0], 50) == 2.0
    assert percentile([], 50) != percentile([], 50)  # NaN when nothing was measured


@pytest.mark.parametrize("seed", [1, 2])
def test_vocabulary_sizes(seed: int) -> None:
    vocab = make_vocabulary(random.Random(seed))
    assert len(set(vocab.persons)) == 300
    assert len(vocab.cities) + len(vocab.venues) == 150
    assert len(vocab.activities) + len(vocab.objects) >= 190


def test_the_command_takes_its_arguments_in_both_ways_of_running_it() -> None:
    assert scale_of(parse_args(["--quick"])).sizes == (2000,)
    scale = scale_of(parse_args(["--sizes", "1000", "1000", "5000", "--queries", "30"]))
    assert (scale.sizes, scale.questions) == ((1000, 5000), 30)
    for command in (
        ["-m", "benchmarks.recall_bench"],
        [str(REPO / "benchmarks" / "recall_bench.py")],
    ):
        done = subprocess.run(
            [sys.executable, *command, "--help"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "--sizes" in done.stdout and "--reranker" in done.stdout


def test_settled_heap_keeps_what_the_benchmark_holds_from_the_collector() -> None:
    held = [[i] for i in range(1000)]  # lists are tracked by the collector
    with settled_heap():
        assert gc.get_freeze_count() >= len(held)
        assert all(o is not held[0] for o in gc.get_objects())  # out of every generation
    assert gc.get_freeze_count() == 0
    assert any(o is held[0] for o in gc.get_objects())  # collected as usual again

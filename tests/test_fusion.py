"""Fusion, budgets and token filling: pure functions, no database."""

from __future__ import annotations

import pytest

from hindsight_tools.recall.arms.base import ArmResult, ranked
from hindsight_tools.recall.budget import recall_budget
from hindsight_tools.recall.fusion import cap_per_source, interleave_fusion, reciprocal_rank_fusion
from hindsight_tools.recall.packing import fill_chunks, fill_token_budget
from hindsight_tools.recall.rerank.base import passthrough_scores, rerank_document
from hindsight_tools.settings import Settings


def arm(name: str, *ids: str) -> ArmResult:
    return ranked(name, [(i, 1.0 - n / 100) for n, i in enumerate(ids)])  # type: ignore[arg-type]


def test_rrf_worked_example_of_the_article() -> None:
    semantic = arm("semantic", "d", "x1", "x2", "x3", "x4")
    bm25 = arm("bm25", "y1", "y2", "y3", "y4", "d")
    fused = {c.id: c for c in reciprocal_rank_fusion([semantic, bm25])}
    assert round(fused["d"].rrf, 4) == 0.0318
    assert fused["d"].source_ranks == {"semantic": 1, "bm25": 5}
    assert fused["d"].arm_scores == {"semantic": 1.0, "bm25": 0.96}


def test_rrf_orders_by_score_and_ignores_empty_arms() -> None:
    fused = reciprocal_rank_fusion([arm("graph"), arm("bm25", "b", "a"), arm("semantic", "a", "c")])
    assert [c.id for c in fused] == ["a", "b", "c"]
    assert fused[0].rrf == pytest.approx(1 / 61 + 1 / 62)


def test_rrf_ties_follow_the_fixed_arm_order() -> None:
    fused = reciprocal_rank_fusion([arm("temporal", "t"), arm("semantic", "s")])
    assert [c.id for c in fused] == ["s", "t"]


def test_cap_per_source() -> None:
    full = arm("semantic", "a", "b", "c")
    assert [h.id for h in cap_per_source(full, 2).hits] == ["a", "b"]
    assert cap_per_source(full, 0) is full and cap_per_source(full, -1) is full
    assert len(full.hits) == 3  # the input is untouched


def test_interleave_takes_each_arms_next_best_without_repeats() -> None:
    fused = interleave_fusion([arm("bm25", "b1", "s1"), arm("semantic", "s1", "s2", "s3")])
    assert [c.id for c in fused] == ["s1", "b1", "s2", "s3"]
    assert fused[0].source_ranks == {"semantic": 1, "bm25": 2}
    assert [c.rrf for c in fused] == sorted((c.rrf for c in fused), reverse=True)


def test_passthrough_spreads_scores_over_point_one_to_one() -> None:
    assert passthrough_scores(0) == []
    assert passthrough_scores(1) == [1.0]
    assert passthrough_scores(4) == pytest.approx([1.0, 0.7, 0.4, 0.1])


def test_rerank_document_prefixes() -> None:
    from datetime import datetime

    assert (
        rerank_document("t", "ctx", datetime(2022, 6, 5))
        == "[Date: June 05, 2022 (2022-06-05)] ctx: t"
    )
    assert rerank_document("t", None, None) == "t"


@pytest.mark.parametrize(
    ("function", "budget", "max_tokens", "expected"),
    [
        ("fixed", "low", 4096, 100),
        ("fixed", "mid", 4096, 300),
        ("fixed", "high", 1, 1000),
        ("adaptive", "low", 4096, 102),
        ("adaptive", "mid", 4096, 307),
        ("adaptive", "high", 4096, 1024),
        ("adaptive", "low", 100, 20),
        ("adaptive", "high", 100_000, 2000),
    ],
)
def test_recall_budget(function: str, budget: str, max_tokens: int, expected: int) -> None:
    settings = Settings(recall_budget_function=function)  # type: ignore[arg-type]
    assert recall_budget(budget, max_tokens, settings) == expected  # type: ignore[arg-type]


def test_token_budget_keeps_a_prefix() -> None:
    items = [("a", "one two three"), ("b", "four five six seven eight"), ("c", "nine")]
    assert [i for i, _ in fill_token_budget(items, 3)] == ["a"]
    assert [i for i, _ in fill_token_budget(items, 100)] == ["a", "b", "c"]
    assert fill_token_budget(items, 0) == []


def test_chunks_are_cut_to_fit_and_marked() -> None:
    kept = fill_chunks(["alpha beta", "gamma delta epsilon zeta eta"], 4)
    assert kept[0] == ("alpha beta", 2, False)
    assert kept[1][2] is True and kept[1][1] == 2 and "gamma" in kept[1][0]

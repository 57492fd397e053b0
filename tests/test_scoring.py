"""Combined scoring and the final order: pure functions, exact values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hindsight_tools.query.time_window import TimeWindow
from hindsight_tools.recall.fusion import FusedCandidate
from hindsight_tools.recall.prerank import (
    Head,
    RankedCandidate,
    candidate_order,
    kept_places,
    passthrough_relevance,
    rank_final,
    rerank_head,
    spread_relevance,
)
from hindsight_tools.recall.rerank.base import RerankOutcome, passthrough_scores
from hindsight_tools.recall.scoring import (
    Evidence,
    ScoringWeights,
    boost,
    combined_scores,
    proof_signal,
    recency_signal,
    relevance_scale,
    temporal_signal,
    window_weight,
)

NOW = datetime(2024, 6, 1, tzinfo=UTC)
WEIGHTS = ScoringWeights()


def ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


@pytest.mark.parametrize(
    ("days", "expected"),
    [(0, 1.0), (182.5, 0.5), (365, 0.1), (400, 0.1), (-30, 1.0), (36.5, 0.9)],
)
def test_linear_recency(days: float, expected: float) -> None:
    assert recency_signal(ago(days), NOW, "linear", 90) == pytest.approx(expected)


@pytest.mark.parametrize(("days", "expected"), [(0, 1.0), (90, 0.5), (180, 0.25), (-5, 1.0)])
def test_exponential_recency_halves_every_half_life(days: float, expected: float) -> None:
    assert recency_signal(ago(days), NOW, "exponential", 90) == pytest.approx(expected)


def test_undated_and_disabled_recency_are_neutral() -> None:
    assert recency_signal(None, NOW, "linear", 90) == 0.5
    assert recency_signal(ago(1), NOW, "none", 90) == 0.5


JUNE = TimeWindow(
    datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 6, 30, 23, 59, 59, 999999, tzinfo=UTC)
)


def on(day: datetime, end: datetime | None = None) -> Evidence:
    return Evidence(date=day, end=end)


def test_the_whole_window_counts_alike() -> None:
    # the edges as much as the centre: "in June" asks for June 1st as much as June 15th
    for day in (1, 15, 30):
        assert temporal_signal(on(datetime(2023, 6, day, tzinfo=UTC)), JUNE) == 1.0
    assert temporal_signal(Evidence(None), JUNE) == 0.5
    assert temporal_signal(on(datetime(2023, 6, 5, tzinfo=UTC)), None) == 0.5


def test_outside_the_window_the_signal_falls_over_one_window_length() -> None:
    end = JUNE.end
    assert end is not None
    days = JUNE.days()
    assert days == pytest.approx(30)
    assert temporal_signal(on(end + timedelta(days=15)), JUNE) == pytest.approx(0.5, abs=1e-6)
    assert temporal_signal(on(datetime(2023, 5, 17, tzinfo=UTC)), JUNE) == pytest.approx(0.5)
    assert temporal_signal(on(end + timedelta(days=31)), JUNE) == 0.0
    # a short window falls over a week, not over its own single day
    day = TimeWindow(datetime(2023, 6, 5, tzinfo=UTC), datetime(2023, 6, 5, 23, tzinfo=UTC))
    two_days_later = datetime(2023, 6, 7, 23, tzinfo=UTC)
    assert temporal_signal(on(two_days_later), day) == pytest.approx(1 - 2 / 7)


def test_a_span_that_overlaps_the_window_is_inside() -> None:
    spring_to_summer = on(datetime(2023, 4, 1, tzinfo=UTC), datetime(2023, 6, 10, tzinfo=UTC))
    assert temporal_signal(spring_to_summer, JUNE) == 1.0
    assert temporal_signal(on(datetime(2023, 4, 1, tzinfo=UTC)), JUNE) < 0.1


def test_half_open_windows_reward_inside() -> None:
    since = TimeWindow(datetime(2023, 6, 1, tzinfo=UTC), None)
    assert temporal_signal(on(datetime(2023, 7, 1, tzinfo=UTC)), since) == 1.0
    assert temporal_signal(on(datetime(2023, 5, 31, tzinfo=UTC)), since) == pytest.approx(1 - 1 / 7)
    assert temporal_signal(on(datetime(2023, 5, 1, tzinfo=UTC)), since) == 0.0


def test_the_window_weight_keeps_inside_and_cuts_far_outside() -> None:
    assert window_weight(0.8, 1.0) == 1.0
    assert window_weight(0.8, 0.0) == pytest.approx(0.2)
    assert window_weight(0.8, 0.5) == pytest.approx(0.6)  # undated: halfway
    assert window_weight(0.0, 0.0) == 1.0  # alpha 0: the window doesn't reorder


def test_in_window_memories_pass_more_relevant_ones_from_elsewhere() -> None:
    inside, outside = on(datetime(2023, 6, 20, tzinfo=UTC)), on(datetime(2022, 1, 1, tzinfo=UTC))
    low_inside, high_outside = combined_scores(
        [0.3, 1.0], [inside, outside], now=NOW, window=JUNE, weights=WEIGHTS
    )
    assert low_inside.final > high_outside.final
    # ... but not one the reranker found irrelevant (the floor of the head's range)
    floor_inside, top_outside = combined_scores(
        [0.1, 1.0], [inside, outside], now=NOW, window=JUNE, weights=WEIGHTS
    )
    assert floor_inside.final < top_outside.final


def test_proof_signal() -> None:
    assert proof_signal(1) == 0.5
    assert proof_signal(10) == pytest.approx(0.5 + 0.2302585, abs=1e-6)
    assert proof_signal(10**9) == 1.0


def test_the_articles_extremes() -> None:
    best = combined_scores(
        [1.0],
        [Evidence(date=NOW, proof_count=10**6)],
        now=NOW,
        window=TimeWindow(NOW - timedelta(days=1), NOW + timedelta(days=1)),
        weights=WEIGHTS,
    )[0]
    assert (best.recency, best.temporal, best.proof) == pytest.approx((1.10, 1.0, 1.05))
    assert best.final == pytest.approx(1.10 * 1.05)
    worst_recency = boost(0.2, recency_signal(ago(1000), NOW, "linear", 90))
    assert worst_recency == pytest.approx(0.92)
    assert boost(0.2, 0.0) == pytest.approx(0.9) and boost(0.1, 0.0) == pytest.approx(0.95)


def test_undated_memory_is_not_boosted() -> None:
    (neutral,) = combined_scores([0.7], [Evidence(None)], now=NOW, window=None, weights=WEIGHTS)
    assert neutral.final == pytest.approx(0.7)


def test_alphas_come_from_the_weights() -> None:
    off = ScoringWeights(recency_alpha=0, temporal_alpha=0, proof_alpha=0)
    (flat,) = combined_scores([0.4], [Evidence(NOW, 50)], now=NOW, window=None, weights=off)
    assert flat.final == pytest.approx(0.4)


def test_relevance_scale_spreads_by_logit() -> None:
    assert relevance_scale([]) == []
    assert relevance_scale([0.3, 0.3]) == [1.0, 1.0]
    scaled = relevance_scale([0.9, 0.5, 0.1])
    assert scaled[0] == pytest.approx(1.0) and scaled[2] == pytest.approx(0.1)
    assert scaled[1] == pytest.approx(0.55)  # logit 0 sits halfway between ±logit(0.9)


def candidates(n: int) -> list[FusedCandidate]:
    return [
        FusedCandidate(id=f"m{i}", rrf=1 / (60 + i), source_ranks={}, arm_scores={})
        for i in range(n)
    ]


def order(scores: list[float], dates: list[datetime | None], reranker: str = "onnx") -> list[str]:
    ranked = rank_final(
        candidates(len(scores)),
        RerankOutcome(scores, reranker),
        [Evidence(d) for d in dates],
        now=NOW,
        window=None,
        weights=WEIGHTS,
    )
    return [r.candidate.id for r in ranked]


@pytest.mark.parametrize(
    ("relevant", "less", "others"),
    [
        (0.9, 0.3, [0.05, 0.6]),  # well calibrated: probabilities across [0, 1]
        (0.99966, 0.982, [0.0001, 0.5]),  # sigmoid of large logits (8 vs 4): saturated
        (0.52, 0.48, [0.45, 0.55, 0.47]),  # an API whose scores bunch around 0.5
    ],
)
def test_relevance_beats_recency(relevant: float, less: float, others: list[float]) -> None:
    # the more relevant memory is a year old, the less relevant one is from today
    scores = [less, relevant, *others]
    dates: list[datetime | None] = [NOW, ago(365), *[ago(100)] * len(others)]
    ranked = order(scores, dates)
    assert ranked.index("m1") < ranked.index("m0")


def test_recency_breaks_near_ties() -> None:
    assert order([0.500, 0.501, 0.1, 0.9], [NOW, ago(365), None, None])[1:3] == ["m0", "m1"]


def test_unscored_tail_keeps_its_fused_order_below_the_scored_head() -> None:
    ranked = rank_final(
        candidates(5),
        RerankOutcome([0.2, 0.9], "onnx", timed_out=True),
        [Evidence(NOW)] * 5,
        now=NOW,
        window=None,
        weights=WEIGHTS,
    )
    assert [r.candidate.id for r in ranked] == ["m1", "m0", "m2", "m3", "m4"]
    finals = [r.final for r in ranked]
    assert finals == sorted(finals, reverse=True) and finals[1] > finals[2]
    assert [r.cross_encoder for r in ranked[2:]] == [None, None, None]
    assert ranked[0].cross_encoder == 0.9


def test_without_a_cross_encoder_relevance_follows_the_best_direct_rank() -> None:
    fused = [
        # RRF's order: the graph and temporal arms' votes put m0 and m1 first
        FusedCandidate("m0", 0.048, {"semantic": 3, "graph": 1, "temporal": 1}),
        FusedCandidate("m1", 0.033, {"graph": 2, "temporal": 2}),
        FusedCandidate("m2", 0.0164, {"bm25": 1}),
        FusedCandidate("m3", 0.0161, {"semantic": 2}),
        FusedCandidate("m4", 0.0160, {"bm25": 2}),
    ]
    dates = [ago(365), NOW, ago(365), ago(365), NOW]
    ranked = rank_final(
        fused,
        RerankOutcome(passthrough_scores(5), "passthrough"),
        [Evidence(d) for d in dates],
        now=NOW,
        window=None,
        weights=WEIGHTS,
    )
    # BM25's #1 first; the two #2s tie and the fresher m4 wins; semantic's #3 next; the
    # expansion-only m1, fresh as it is, last
    assert [r.candidate.id for r in ranked] == ["m2", "m4", "m3", "m0", "m1"]
    assert ranked[0].final == pytest.approx(1.0 * 0.92)
    assert all(r.cross_encoder is None for r in ranked)


def test_passthrough_relevance_is_one_over_the_direct_rank_spread() -> None:
    fused = [
        FusedCandidate("a", 0.03, {"semantic": 1, "bm25": 4}),
        FusedCandidate("b", 0.02, {"bm25": 2}),
        FusedCandidate("c", 0.01, {"graph": 1}),
    ]
    # 1/1, 1/2 and ~0 spread onto [0.1, 1]
    assert passthrough_relevance(fused) == pytest.approx([1.0, 0.55, 0.1])


def test_spread_relevance_is_min_max_onto_the_floor() -> None:
    assert spread_relevance([]) == []
    assert spread_relevance([0.02, 0.02]) == [1.0, 1.0]
    assert spread_relevance([0.03, 0.02, 0.01]) == pytest.approx([1.0, 0.55, 0.1])


def test_the_unscored_tail_keeps_the_order_it_is_given() -> None:
    fused = [
        FusedCandidate("scored", 0.05, {"semantic": 1}),
        FusedCandidate("bm-3", 0.015, {"bm25": 3}),
        FusedCandidate("sem-9", 0.02, {"semantic": 9}),
        FusedCandidate("graph-only", 0.04, {"graph": 1, "temporal": 1}),
    ]
    ranked = rank_final(
        fused,
        RerankOutcome([0.9], "onnx"),
        [Evidence(NOW)] * 4,
        now=NOW,
        window=None,
        weights=WEIGHTS,
    )
    assert [r.candidate.id for r in ranked] == ["scored", "bm-3", "sem-9", "graph-only"]


def test_without_late_interaction_the_head_follows_the_best_direct_rank() -> None:
    fused = [
        FusedCandidate("both", 0.032, {"semantic": 2, "bm25": 4}),
        FusedCandidate("graph-1", 0.0165, {"graph": 1, "temporal": 1}),
        FusedCandidate("sem-1", 0.0164, {"semantic": 1}),
        FusedCandidate("bm-3", 0.0159, {"bm25": 3}),
        FusedCandidate("sem-5", 0.0154, {"semantic": 5}),
    ]
    # semantic's #1, then semantic's #2, then BM25's #3; "graph-1", the #1 of two arms, is
    # the only candidate two arms agree on and takes the head's last seat from BM25's #3
    _, head, rest = rerank_head(fused, 3)
    assert [c.id for c in head] == ["sem-1", "both", "graph-1"]
    assert [c.id for c in rest] == ["bm-3", "sem-5"]
    assert [c.id for c in candidate_order(fused)] == ["sem-1", "both", "bm-3", "sem-5", "graph-1"]
    _, everything, nothing = rerank_head(fused, 10)
    assert {c.id for c in everything} == {c.id for c in fused} and nothing == []


def test_the_arms_agreement_survives_the_head_selection() -> None:
    # MaxSim puts "agreed" last, although the temporal, semantic and BM25 arms all rank it
    # first; it still reaches the cross-encoder, at the head's last seat
    fused = [
        FusedCandidate("agreed", 0.049, {"temporal": 1, "semantic": 1, "bm25": 1}),
        *(FusedCandidate(f"m{i}", 0.03 - i / 1000, {"semantic": i + 2}) for i in range(8)),
    ]
    prerank = {"agreed": 0.2, **{f"m{i}": 0.9 - i / 100 for i in range(8)}}
    _, head, rest = rerank_head(fused, 4, prerank)
    assert [c.id for c in head] == ["m0", "m1", "m2", "agreed"]
    assert [c.id for c in rest] == [f"m{i}" for i in range(3, 8)]
    # one arm alone is no agreement
    alone = [FusedCandidate("one-arm", 0.05, {"bm25": 1}), *fused[1:]]
    _, head, _ = rerank_head(alone, 4, {**prerank, "one-arm": 0.2})
    assert [c.id for c in head] == ["m0", "m1", "m2", "m3"]
    # nor does a seat go to a second agreed candidate when one is in the head already
    _, head, _ = rerank_head(fused, 4, {**prerank, "agreed": 0.95})
    assert [c.id for c in head] == ["agreed", "m0", "m1", "m2"]


def test_the_window_weight_reorders_the_head() -> None:
    fused = [FusedCandidate(f"m{i}", 0.03 - i / 1000, {"semantic": i + 1}) for i in range(6)]
    prerank = {f"m{i}": 0.9 - i / 100 for i in range(6)}
    window = {"m0": 0.2, "m1": 0.2, "m4": 1.0, "m5": 1.0, "m2": 0.2, "m3": 0.2}
    _, head, rest = rerank_head(fused, 2, prerank, {k: v for k, v in window.items()})
    assert [c.id for c in head] == ["m4", "m5"]
    assert [c.id for c in rest] == ["m0", "m1", "m2", "m3"]


def period(start: datetime, after: datetime) -> TimeWindow:
    """``[start, after)`` as the parser writes it: the end is the last microsecond."""
    return TimeWindow(start, after - timedelta(microseconds=1))


def test_a_period_the_memory_names_counts_for_its_share_inside_the_window() -> None:
    said = datetime(2023, 7, 3, tzinfo=UTC)
    summer = period(datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 9, 1, tzinfo=UTC))
    july = period(datetime(2023, 7, 1, tzinfo=UTC), datetime(2023, 8, 1, tzinfo=UTC))
    may = period(datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 6, 1, tzinfo=UTC))
    # "last month", said on July 3rd: about June wholly, and not about the July beside it
    assert temporal_signal(Evidence(said, named=JUNE), JUNE) == 1.0
    assert temporal_signal(Evidence(said, named=JUNE), may) == 0.0
    # "the summer" answers a question about July for a third
    in_may = datetime(2023, 5, 25, tzinfo=UTC)
    assert temporal_signal(Evidence(in_may, named=summer), july) == pytest.approx(31 / 92, 0.01)
    # the nearer of the date and the named period wins; a period open on one side places
    # nothing
    assert temporal_signal(Evidence(datetime(2023, 6, 2, tzinfo=UTC), named=july), JUNE) == 1.0
    since = TimeWindow(datetime(2023, 6, 1, tzinfo=UTC), None)
    assert temporal_signal(Evidence(datetime(2020, 1, 1, tzinfo=UTC), named=since), JUNE) == 0.0


def _by_late_interaction(n: int) -> tuple[list[FusedCandidate], dict[str, float]]:
    """``n`` candidates that late interaction orders m0, m1, …, given in the reverse (fused)
    order."""
    fused = [
        FusedCandidate(f"m{i}", 0.01 + i / 1000, {"semantic": n - i}) for i in reversed(range(n))
    ]
    return fused, {f"m{i}": 0.9 - i / 100 for i in range(n)}


def _in_bands(
    head: Head, outcome: RerankOutcome, prerank: dict[str, float]
) -> list[RankedCandidate]:
    """:func:`rank_final` over a cut of :func:`rerank_head`, every memory dated today."""
    candidates = head.kept + head.scored + head.rest
    return rank_final(
        candidates,
        outcome,
        [Evidence(NOW)] * len(candidates),
        now=NOW,
        window=None,
        weights=WEIGHTS,
        prerank=prerank,
        kept=len(head.kept),
    )


def test_the_first_candidates_keep_their_places_and_the_cross_encoder_reads_the_next() -> None:
    fused, prerank = _by_late_interaction(8)
    cut = rerank_head(fused, 3, prerank, keep=2)
    assert [c.id for c in cut.kept] == ["m0", "m1"]
    assert [c.id for c in cut.scored] == ["m2", "m3", "m4"]
    assert [c.id for c in cut.rest] == ["m5", "m6", "m7"]
    ranked = _in_bands(cut, RerankOutcome([0.1, 0.2, 0.95], "onnx"), prerank)
    # the cross-encoder's favourite comes next after the kept two, however high it scored
    assert [r.candidate.id for r in ranked] == ["m0", "m1", "m4", "m3", "m2", "m5", "m6", "m7"]
    assert [r.kept for r in ranked] == [True, True] + [False] * 6
    assert [r.cross_encoder for r in ranked[:5]] == [None, None, 0.95, 0.2, 0.1]
    finals = [r.final for r in ranked]
    assert finals == sorted(finals, reverse=True) and len(set(finals)) == 8


def test_keeping_more_than_there_are_scores_nothing_and_keeps_the_order() -> None:
    fused, prerank = _by_late_interaction(3)
    kept, scored, rest = rerank_head(fused, 6, prerank, keep=8)
    assert [c.id for c in kept] == ["m0", "m1", "m2"] and scored == [] and rest == []


def test_a_deadline_inside_the_scored_band_leaves_the_rest_of_it_in_order() -> None:
    fused, prerank = _by_late_interaction(6)
    cut = rerank_head(fused, 3, prerank, keep=1)
    # m1 and m2 scored, m3 not
    ranked = _in_bands(cut, RerankOutcome([0.1, 0.9], "onnx", timed_out=True), prerank)
    assert [r.candidate.id for r in ranked] == ["m0", "m2", "m1", "m3", "m4", "m5"]
    finals = [r.final for r in ranked]
    assert finals == sorted(finals, reverse=True)


def test_the_agreement_seat_goes_to_the_scored_band_not_the_kept_one() -> None:
    fused, prerank = _by_late_interaction(8)
    agreed_late = FusedCandidate("agreed", 0.05, {"temporal": 1, "semantic": 1, "bm25": 1})
    kept, scored, rest = rerank_head([*fused, agreed_late], 3, {**prerank, "agreed": 0.1}, keep=2)
    assert [c.id for c in kept] == ["m0", "m1"]
    assert [c.id for c in scored] == ["m2", "m3", "agreed"]
    assert [c.id for c in rest] == ["m4", "m5", "m6", "m7"]
    # agreed among the kept: no seat is needed, not even for another agreed one further down
    agreed_too = FusedCandidate("agreed-too", 0.05, {"temporal": 2, "semantic": 2})
    kept, scored, _ = rerank_head(
        [*fused, agreed_late, agreed_too],
        3,
        {**prerank, "agreed": 0.95, "agreed-too": 0.05},
        keep=2,
    )
    assert [c.id for c in kept] == ["agreed", "m0"] and [c.id for c in scored] == ["m1", "m2", "m3"]


def test_nothing_is_kept_without_maxsim_or_a_cross_encoder_or_when_a_period_is_named() -> None:
    prerank = {"m0": 0.9}
    summer = TimeWindow(datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 8, 31, tzinfo=UTC))
    assert kept_places(8, prerank=prerank, window=None, cross_encoder=True) == 8
    assert kept_places(8, prerank=None, window=None, cross_encoder=True) == 0
    assert kept_places(8, prerank=prerank, window=None, cross_encoder=False) == 0
    assert kept_places(8, prerank=prerank, window=summer, cross_encoder=True) == 0
    assert kept_places(0, prerank=prerank, window=None, cross_encoder=True) == 0


def test_a_cross_encoder_that_fails_over_to_passthrough_leaves_the_kept_band_first() -> None:
    fused, prerank = _by_late_interaction(6)
    cut = rerank_head(fused, 3, prerank, keep=2)
    ranked = _in_bands(cut, RerankOutcome(passthrough_scores(3), "passthrough"), prerank)
    assert [r.candidate.id for r in ranked] == ["m0", "m1", "m2", "m3", "m4", "m5"]
    assert all(r.cross_encoder is None for r in ranked)
    finals = [r.final for r in ranked]
    assert finals == sorted(finals, reverse=True) and len(set(finals)) == 6


def test_the_kept_band_ranks_above_the_scored_one_whatever_its_maxsim() -> None:
    # MaxSim is a mean of cosines and may be zero or below; the kept band still leads
    fused = [FusedCandidate(f"m{i}", 0.01, {"semantic": i + 1}) for i in range(4)]
    prerank = {"m0": 0.0, "m1": -0.02, "m2": -0.03, "m3": -0.04}
    cut = rerank_head(fused, 2, prerank, keep=2)
    ranked = _in_bands(cut, RerankOutcome([0.9, 0.1], "onnx"), prerank)
    assert [r.candidate.id for r in ranked] == ["m0", "m1", "m2", "m3"]
    finals = [r.final for r in ranked]
    assert finals == sorted(finals, reverse=True) and min(finals) > 0 and len(set(finals)) == 4
    # nothing scored: the kept band still ranks the rest below it
    alone = _in_bands(cut, RerankOutcome([], "onnx"), prerank)
    assert [r.candidate.id for r in alone] == ["m0", "m1", "m2", "m3"]
    assert [r.final for r in alone] == sorted((r.final for r in alone), reverse=True)

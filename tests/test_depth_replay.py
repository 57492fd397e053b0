"""The depth replay's own logic on a hand-made question: what a depth-d rerank returns, and
the oracle bound."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from benchmarks.depth_replay import Captured, adaptive_depth, oracle_at_10, replay
from hindsight_tools.evaluation import recall_at_k
from hindsight_tools.query.time_window import TimeWindow
from hindsight_tools.recall.fusion import FusedCandidate
from hindsight_tools.recall.scoring import Evidence, ScoringWeights

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def _question() -> Captured:
    # Fused order a, b, c, d; the cross-encoder likes d best, then c.
    head = [
        FusedCandidate("a", 0.04, {"semantic": 1, "bm25": 5}),
        FusedCandidate("b", 0.03, {"semantic": 2}),
        FusedCandidate("c", 0.02, {"bm25": 3}),
        FusedCandidate("d", 0.01, {"semantic": 4}),
    ]
    return Captured(
        bank="eval-conv",
        evidence_ids=["D4", "D3"],
        head=head,
        window=None,
        cross_encoder=True,
        scores={"a": 0.1, "b": 0.2, "c": 0.7, "d": 0.9},
        evidence={c.id: Evidence(date=None) for c in head},
        scoring={
            "now": NOW,
            "window": None,
            "weights": ScoringWeights(recency_alpha=0, temporal_alpha=0, proof_alpha=0),
        },
        dia={"a": "D1", "b": "D2", "c": "D3", "d": "D4"},
        engine_order=[],
        rerank_seconds=0.0,
        reranker="onnx",
    )


def test_a_deeper_replay_lets_the_cross_encoder_reach_the_answers() -> None:
    q = _question()
    assert replay(q, 4) == ["D4", "D3", "D2", "D1"]
    # Depth 2 scores a and b only (b over a); c and d keep their direct-rank order below.
    assert replay(q, 2) == ["D2", "D1", "D3", "D4"]
    assert replay(q, 0) == ["D1", "D2", "D3", "D4"]


def test_the_oracle_is_a_perfect_reranker_of_the_same_candidates() -> None:
    # Twelve candidates; the evidence is the direct arms' 11th and 12th, and the
    # cross-encoder wrongly scores it lowest.
    head = [FusedCandidate(f"m{i}", 1 / (i + 1), {"semantic": i + 1}) for i in range(12)]
    q = replace(
        _question(),
        evidence_ids=["D10", "D11"],
        head=head,
        scores={c.id: (0.0 if i >= 10 else 1 - i / 20) for i, c in enumerate(head)},
        evidence={c.id: Evidence(date=None) for c in head},
        dia={c.id: f"D{i}" for i, c in enumerate(head)},
    )
    assert recall_at_k(q.evidence_ids, replay(q, 12), 10) == 0.0
    assert oracle_at_10(q, 10) == 0.0  # neither is scored, and the tail starts at 11
    assert oracle_at_10(q, 11) == 0.5
    assert oracle_at_10(q, 12) == 1.0


def test_adaptive_depth_goes_on_only_while_nothing_scored_is_confident() -> None:
    q = _question()
    # The first two by direct rank are a (0.1) and b (0.2): nothing confident, go on.
    assert adaptive_depth(q, 2, 4, 0.5) == 4
    # With three, c (0.7) is among them: stop there.
    assert adaptive_depth(q, 3, 4, 0.5) == 3
    assert adaptive_depth(q, 3, 4, 0.8) == 4


def test_with_late_interaction_the_replayed_head_follows_its_scores() -> None:
    q = _question()
    # MaxSim puts c and d first: at depth 2 the cross-encoder scores those two, and the
    # unscored tail keeps the MaxSim order (b before a), not the fused one.
    q = replace(q, scoring={**q.scoring, "prerank": {"a": 0.1, "b": 0.2, "c": 0.9, "d": 0.8}})
    assert replay(q, 2) == ["D4", "D3", "D2", "D1"]
    assert recall_at_k(q.evidence_ids, replay(q, 2), 2) == 1.0
    assert replay(q, 1)[:1] == ["D3"]  # only c is scored: MaxSim's best


def test_a_replay_that_keeps_candidates_scores_the_ones_after_them() -> None:
    # MaxSim's order: a, b, c, d; the cross-encoder likes d best, then c, then b.
    maxsim = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}
    q = replace(_question(), scoring={**_question().scoring, "prerank": maxsim})
    # keeping one: a stays first, then b, c and d in the cross-encoder's order
    assert replay(q, 3, keep=1) == ["D1", "D4", "D3", "D2"]
    # keeping one and scoring two: a stays, c over b, d the unscored tail
    assert replay(q, 2, keep=1) == ["D1", "D3", "D2", "D4"]
    # nothing kept: the cross-encoder's order from the top
    assert replay(q, 4) == ["D4", "D3", "D2", "D1"]


def test_a_replay_keeps_nothing_where_the_engine_keeps_nothing() -> None:
    maxsim = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}
    q = replace(_question(), scoring={**_question().scoring, "prerank": maxsim})
    summer = TimeWindow(datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 8, 31, tzinfo=UTC))
    # a question that names a period: the cross-encoder reads from the top, as with keep 0
    named = replace(q, scoring={**q.scoring, "window": summer})
    assert replay(named, 3, keep=1) == replay(named, 3) == ["D3", "D2", "D1", "D4"]
    # an engine without a cross-encoder keeps nothing either
    assert replay(replace(q, cross_encoder=False), 3, keep=1) == replay(q, 3)

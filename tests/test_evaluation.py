"""Evaluation: recall@k and its aggregation on hand-made rankings; one small run end to end."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from hindsight_tools import InvalidRequestError, MemoryEngine
from hindsight_tools.evaluation import (
    BankData,
    Dataset,
    Question,
    QuestionResult,
    Report,
    RetainStats,
    aggregate,
    format_report,
    latency_percentiles,
    load_dataset,
    recall_at_k,
    run_eval,
)

# --------------------------------------------------------------------------- recall_at_k


def test_recall_counts_the_share_of_evidence_in_the_top_k() -> None:
    ranked = ["D1:1", "D1:2", "D1:3", "D1:4", "D1:5", "D1:6"]
    assert recall_at_k(["D1:2", "D1:6", "D9:9"], ranked, 5) == pytest.approx(1 / 3)
    assert recall_at_k(["D1:2", "D1:6", "D9:9"], ranked, 6) == pytest.approx(2 / 3)
    assert recall_at_k(["D1:6"], ranked, 5) == 0.0
    assert recall_at_k(["D1:1"], ranked, 1) == 1.0


def test_a_turn_recalled_twice_counts_once_and_takes_two_slots() -> None:
    ranked = ["D1:1", "D1:1", "D1:1", "D1:2"]
    assert recall_at_k(["D1:1", "D1:2"], ranked, 3) == 0.5
    assert recall_at_k(["D1:1", "D1:2"], ranked, 4) == 1.0


def test_evidence_named_twice_counts_once() -> None:
    assert recall_at_k(["D1:1", "D1:1", "D1:2"], ["D1:1"], 5) == 0.5


def test_k_beyond_the_ranking_uses_all_of_it() -> None:
    assert recall_at_k(["D1:1", "D1:2", "D1:3", "D1:4"], ["D1:4", "D1:1", "D7:7"], 50) == 0.5
    assert recall_at_k(["D1:1"], [], 10) == 0.0


def test_memories_without_dia_id_take_a_slot_and_match_nothing() -> None:
    assert recall_at_k(["D1:1"], [None, None, "D1:1"], 2) == 0.0
    assert recall_at_k(["D1:1"], [None, None, "D1:1"], 3) == 1.0


def test_recall_needs_evidence_and_a_positive_k() -> None:
    with pytest.raises(ValueError, match="evidence"):
        recall_at_k([], ["D1:1"], 5)
    with pytest.raises(ValueError, match="k must be"):
        recall_at_k(["D1:1"], ["D1:1"], 0)


# --------------------------------------------------------------------------- percentiles


def test_percentiles_interpolate_like_numpy() -> None:
    assert latency_percentiles([1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx((3.0, 4.8))
    hundred = [float(v) for v in range(100, 0, -1)]  # order must not matter
    assert latency_percentiles(hundred) == pytest.approx((50.5, 95.05))
    skewed = [0.01, 0.02, 0.02, 0.03, 0.5, 0.04, 0.01, 2.0]
    expected = (np.percentile(skewed, 50), np.percentile(skewed, 95))
    assert latency_percentiles(skewed) == pytest.approx(expected)


def test_percentiles_of_one_and_of_none() -> None:
    assert latency_percentiles([0.25]) == (0.25, 0.25)
    assert latency_percentiles([]) is None


# --------------------------------------------------------------------------- aggregate

NAMES = {1: "multi-hop", 2: "temporal", 4: "single-hop", 5: "adversarial"}


def row(
    category: int, evidence: list[str], ranked: list[str], seconds: float = 0.01
) -> QuestionResult:
    return QuestionResult(
        bank="conv",
        qid=f"q{uuid.uuid4().hex[:6]}",
        category=category,
        category_name=NAMES[category],
        evidence=tuple(evidence),
        ranked=tuple(ranked),
        seconds=seconds,
    )


# Filler turns so that each evidence turn lands at a chosen rank.
FILLER = [f"F:{i}" for i in range(60)]


def at(rank: int, dia_id: str) -> list[str]:
    """A ranking with ``dia_id`` at 1-based ``rank`` and filler elsewhere."""
    return [*FILLER[: rank - 1], dia_id, *FILLER[rank - 1 :]]


ROWS = [
    # multi-hop: one full hit at rank 1; one half hit (second turn at rank 12)
    row(1, ["A"], at(1, "A"), 0.010),
    row(1, ["A", "B"], ["A", *at(11, "B")], 0.020),
    # temporal: hit at rank 7 (counts from k=10), and one without evidence (skipped)
    row(2, ["C"], at(7, "C"), 0.030),
    row(2, [], at(1, "X"), 0.040),
    # single-hop: hit at rank 30 (counts only at k=50)
    row(4, ["D"], at(30, "D"), 0.050),
    # adversarial: miss, then hit at rank 3
    row(5, ["E"], FILLER, 0.060),
    row(5, ["E"], at(3, "E"), 0.070),
]


def test_aggregate_means_per_category_over_questions_with_evidence() -> None:
    report = aggregate(ROWS)
    by_name = {score.name: score for score in report.categories}
    assert [s.category for s in report.categories] == [1, 2, 4, 5]
    assert by_name["multi-hop"].questions == 2
    # k=5: (1 + 0.5) / 2; k=20: (1 + 1) / 2
    assert by_name["multi-hop"].recall == pytest.approx({5: 0.75, 10: 0.75, 20: 1.0, 50: 1.0})
    temporal = by_name["temporal"]
    assert (temporal.questions, temporal.skipped) == (1, 1)
    assert temporal.recall == pytest.approx({5: 0.0, 10: 1.0, 20: 1.0, 50: 1.0})
    assert by_name["single-hop"].recall == pytest.approx({5: 0.0, 10: 0.0, 20: 0.0, 50: 1.0})
    assert by_name["adversarial"].recall == pytest.approx({5: 0.5, 10: 0.5, 20: 0.5, 50: 0.5})


def test_overall_with_and_without_adversarial() -> None:
    report = aggregate(ROWS)
    # Six scored questions: k=5 -> 1, .5, 0, 0, 0, 1; k=10 -> 1, .5, 1, 0, 0, 1; ...
    assert report.overall.questions == 6
    assert report.overall.skipped == 1
    assert report.overall.recall == pytest.approx({5: 2.5 / 6, 10: 3.5 / 6, 20: 4 / 6, 50: 5 / 6})
    # Without category 5: four scored questions: 1, .5/1, 1 (k>=10), 1 (k=50)
    plain = report.overall_no_adversarial
    assert (plain.questions, plain.skipped) == (4, 1)
    assert plain.recall == pytest.approx({5: 1.5 / 4, 10: 2.5 / 4, 20: 3 / 4, 50: 4 / 4})


def test_only_the_category_named_adversarial_is_left_out() -> None:
    # Another data set's category 5 (BEAM's instruction following) is an ordinary question,
    # and an adversarial category under another number is still left out.
    rows = [
        row(1, ["A"], at(1, "A")).model_copy(
            update={"category": 9, "category_name": "adversarial"}
        ),
        row(5, ["B"], FILLER).model_copy(update={"category_name": "instruction_following"}),
        row(4, ["C"], at(1, "C")),
    ]
    plain = aggregate(rows, ks=(5,)).overall_no_adversarial
    assert plain.questions == 2
    assert plain.recall == pytest.approx({5: 0.5})  # B missed, C found; A not counted


def test_aggregate_latency_covers_every_recall_including_unscored() -> None:
    latency = aggregate(ROWS).latency
    assert latency.recalls == 7
    assert latency.p50_ms == pytest.approx(40.0)
    assert latency.p95_ms == pytest.approx(np.percentile([10, 20, 30, 40, 50, 60, 70], 95))


def test_a_category_with_no_evidence_has_no_mean() -> None:
    report = aggregate([row(2, [], ["A"])], ks=(5,))
    assert report.categories[0].recall == {5: None}
    assert report.overall.recall == {5: None}
    assert report.overall.skipped == 1


def test_report_round_trips_through_json_and_formats_as_markdown() -> None:
    report = aggregate(ROWS, retain=RetainStats(memories=600, seconds=2.0))
    again = Report.from_json(report.to_json())
    assert again == report
    data = json.loads(report.to_json())
    assert data["overall"]["recall"]["50"] == pytest.approx(5 / 6)

    table = format_report(report)
    lines = table.splitlines()
    assert lines[0] == "| category | questions | R@5 | R@10 | R@20 | R@50 |"
    assert "| multi-hop (1) | 2 | 0.750 | 0.750 | 1.000 | 1.000 |" in lines
    assert "| temporal (2) | 1 | 0.000 | 1.000 | 1.000 | 1.000 |" in lines
    assert "| overall | 6 | 0.417 | 0.583 | 0.667 | 0.833 |" in lines
    assert "| overall (no adversarial) | 4 | 0.375 | 0.625 | 0.750 | 1.000 |" in lines
    assert "p50 40.0 ms" in table
    assert "600 memories in 2.0 s (300.0 memories/s)" in table
    assert "1 question(s) without evidence" in table


# --------------------------------------------------------------------------- loading and running

MEMORIES: list[tuple[str, int, str]] = [
    ("D1:1", 1, "Nadia: I adopted a three-legged greyhound named Biscuit last week."),
    ("D1:2", 1, "Tomas: That's lovely! I spent the weekend repairing my sailboat's mast."),
    ("D1:3", 1, "Nadia: My sister Leila is moving to Lisbon to study marine biology."),
    ("D2:1", 2, "Tomas: I finally finished my first marathon in Berlin, in four hours."),
    ("D2:2", 2, "Nadia: I've started learning the cello; my teacher is very patient."),
]
DATES = {1: "2023-05-08T13:56:00", 2: "2023-06-01T10:00:00"}


def write_locomo(directory: Path, bank: str) -> None:
    memories = [
        {
            "bank": bank,
            "id": f"{bank}:{dia_id}",
            "dia_id": dia_id,
            "document_id": f"{bank}:session_{session}",
            "session": session,
            "occurred_at": DATES[session],
            "speaker": text.split(":")[0],
            "text": text,
        }
        for dia_id, session, text in MEMORIES
    ]
    documents = [
        {
            "bank": bank,
            "document_id": f"{bank}:session_{session}",
            "occurred_at": DATES[session],
            "text": "\n".join(text for _, s, text in MEMORIES if s == session),
        }
        for session in (1, 2)
    ]
    queries = [
        {
            "bank": bank,
            "qid": f"{bank}_q0",
            "question": "What is the name of the three-legged greyhound Nadia adopted?",
            "answer": "Biscuit",
            "category": 4,
            "category_name": "single-hop",
            "evidence": ["D1:1"],
            "query_time": DATES[2],
        },
        {
            "bank": bank,
            "qid": f"{bank}_q1",
            "question": "Where did Tomas run his first marathon?",
            "answer": "Berlin",
            "category": 1,
            "category_name": "multi-hop",
            "evidence": ["D2:1", "D2:1"],
            "query_time": DATES[2],
        },
        {
            "bank": bank,
            "qid": f"{bank}_q2",
            "question": "What instrument did Tomas start learning?",
            "answer": "Not mentioned",
            "category": 5,
            "category_name": "adversarial",
            "evidence": ["D2:2"],
            "query_time": DATES[2],
        },
    ]
    for name, records in (
        ("memories", memories),
        ("documents", documents),
        ("queries", queries),
    ):
        lines = [json.dumps(record) for record in records]
        (directory / f"{name}.jsonl").write_text("\n".join(lines) + "\n")


def test_load_dataset_groups_by_bank_and_attaches_chunks(tmp_path: Path) -> None:
    write_locomo(tmp_path, "conv-a")
    dataset = load_dataset(tmp_path)
    (data,) = dataset.banks
    assert data.bank == "conv-a"
    assert [item["metadata"]["dia_id"] for item in data.items] == [m[0] for m in MEMORIES]
    assert data.items[0]["chunk"].startswith("Nadia: I adopted")
    assert "marathon" in data.items[3]["chunk"]
    assert data.items[0]["occurred_start"] == DATES[1]
    assert [q.category for q in data.questions] == [4, 1, 5]
    assert data.questions[1].evidence == ("D2:1", "D2:1")
    assert data.questions[0].query_time == DATES[2]


def test_load_dataset_without_documents_and_with_a_bad_line(tmp_path: Path) -> None:
    write_locomo(tmp_path, "conv-a")
    (tmp_path / "documents.jsonl").unlink()
    assert "chunk" not in load_dataset(tmp_path).banks[0].items[0]
    with (tmp_path / "queries.jsonl").open("a") as out:
        out.write(json.dumps({"bank": "conv-a", "question": "?", "evidence": "D1:1"}) + "\n")
    with pytest.raises(InvalidRequestError, match=r"queries.jsonl:4.evidence"):
        load_dataset(tmp_path)


def test_run_eval_end_to_end(engine: MemoryEngine, tmp_path: Path) -> None:
    write_locomo(tmp_path, "conv-a")
    prefix = f"eval-{uuid.uuid4().hex[:8]}-"
    dataset = load_dataset(tmp_path)
    try:
        with pytest.raises(InvalidRequestError, match="unknown bank"):
            run_eval(engine, dataset, banks=["nope"], progress=False, bank_prefix=prefix)
        report = run_eval(engine, dataset, progress=False, bank_prefix=prefix)
        # Again on the same banks without retaining: the same rankings.
        reused = run_eval(engine, dataset, progress=False, bank_prefix=prefix, fresh=False, limit=1)
        # Reuse of a bank an interrupted run left half-filled retains it afresh.
        engine.delete_bank(prefix + "conv-a")
        engine.retain(prefix + "conv-a", dataset.banks[0].items[:2])
        first_run = run_eval(engine, dataset, progress=False, bank_prefix=prefix, fresh=False)
    finally:
        engine.delete_bank(prefix + "conv-a")

    assert report.ks == (5, 10, 20, 50)
    assert [(s.category, s.name, s.questions) for s in report.categories] == [
        (1, "multi-hop", 1),
        (4, "single-hop", 1),
        (5, "adversarial", 1),
    ]
    assert report.overall.questions == 3
    assert report.overall_no_adversarial.questions == 2
    assert report.latency.recalls == 3
    assert report.retain is not None and report.retain.memories == len(MEMORIES)

    by_qid = {q.qid: q for q in report.questions}
    easy = by_qid["conv-a_q0"]
    assert easy.ranked[0] == "D1:1"
    assert recall_at_k(easy.evidence, easy.ranked, 5) == 1.0
    single_hop = next(s for s in report.categories if s.category == 4)
    assert single_hop.recall[5] == 1.0
    # Five memories in the bank: every one is within the top 50, so recall@50 is perfect.
    assert report.overall.recall[50] == 1.0
    assert all(len(q.ranked) <= 50 for q in report.questions)

    assert reused.retain is None
    assert [q.qid for q in reused.questions] == ["conv-a_q0"]
    assert reused.questions[0].ranked == easy.ranked
    assert "| single-hop (4) | 1 | 1.000 |" in format_report(report)

    assert first_run.retain is not None and first_run.retain.memories == len(MEMORIES)
    assert [q.ranked for q in first_run.questions] == [q.ranked for q in report.questions]


def test_run_eval_keeps_a_message_longer_than_the_store_takes(engine: MemoryEngine) -> None:
    limit = engine.settings.retain_max_text_chars
    pasted = "The angle bisector construction, step by step. " * (limit // 40)
    assert len(pasted) > limit
    items = (
        {"text": pasted, "metadata": {"dia_id": "D1:1"}},
        {"text": "Nadia adopted a grey cat called Miso.", "metadata": {"dia_id": "D1:2"}},
    )
    question = Question("q0", "How do I construct an angle bisector?", 1, "single-hop", ("D1:1",))
    dataset = Dataset(banks=(BankData(bank="long", items=items, questions=(question,)),))
    prefix = f"eval-{uuid.uuid4().hex[:8]}-"
    try:
        report = run_eval(engine, dataset, progress=False, bank_prefix=prefix)
        stored = engine.list_memories(prefix + "long")
    finally:
        engine.delete_bank(prefix + "long")

    assert report.retain is not None and report.retain.cut == 1
    assert sorted(len(m.text) for m in stored) == [len(items[1]["text"]), limit]
    assert report.questions[0].ranked[0] == "D1:1"
    assert "1 cut to the store's text limit" in format_report(report)


def test_run_eval_retained_turn_by_turn_ranks_as_in_batches(
    engine: MemoryEngine, db: psycopg.Connection[tuple[Any, ...]], tmp_path: Path
) -> None:
    write_locomo(tmp_path, "conv-a")
    dataset = load_dataset(tmp_path)
    documents = {item["document_id"] for item in dataset.banks[0].items}
    prefix = f"eval-{uuid.uuid4().hex[:8]}-"
    try:
        with pytest.raises(InvalidRequestError, match="retain_batch"):
            run_eval(engine, dataset, progress=False, bank_prefix=prefix, retain_batch=0)
        batched = run_eval(engine, dataset, progress=False, bank_prefix=prefix)
        turn_by_turn = run_eval(engine, dataset, progress=False, bank_prefix=prefix, retain_batch=1)
        read_after = db.execute(
            "SELECT count(context_of) FROM memory_token_vectors WHERE bank_id = %s",
            (prefix + "conv-a",),
        ).fetchone()
    finally:
        engine.delete_bank(prefix + "conv-a")

    # the same turns found (neighbours' order may swap: a batch is encoded with padding)
    assert turn_by_turn.overall.recall == batched.overall.recall
    assert [q.ranked[0] for q in turn_by_turn.questions] == [q.ranked[0] for q in batched.questions]
    # each turn but a session's first was read after the turn before it, though each came
    # in a call of its own
    assert read_after == (len(MEMORIES) - len(documents),)

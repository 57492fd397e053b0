"""The question-family benchmark's own arithmetic: window precision, its floor, and the
time-scoped questions it generates from a conversation's dates."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from benchmarks.families import (
    MIN_PERIOD_MEMORIES,
    Period,
    half_scores,
    halves_of,
    time_questions,
    window_floor,
    window_precision,
)
from hindsight_tools.evaluation import BankData, QuestionResult, aggregate
from hindsight_tools.query.time_window import extract_time_window


def test_window_precision_counts_the_top_k_inside_the_period() -> None:
    inside = {"a", "b", "c"}
    assert window_precision(inside, ["a", "x", "b", "y", "z"], 5) == pytest.approx(0.4)
    assert window_precision(inside, ["a", "b", "c", "x"], 3) == 1.0
    # an empty slot, or a memory without an id, is not in the period
    assert window_precision(inside, ["a", None], 5) == pytest.approx(0.2)
    assert window_precision(inside, [], 5) == 0.0
    with pytest.raises(ValueError, match="at least 1"):
        window_precision(inside, ["a"], 0)


def test_the_floor_is_the_banks_share_inside_the_period() -> None:
    assert window_floor({"a", "b"}, 8) == pytest.approx(0.25)
    # a ranking blind to time: every order of the bank averages the floor at k = bank size
    assert window_precision({"a", "b"}, list("abcdefgh"), 8) == window_floor({"a", "b"}, 8)
    with pytest.raises(ValueError, match="empty bank"):
        window_floor({"a"}, 0)


def test_halves_split_the_chats_in_order_and_score_each_apart() -> None:
    halves = halves_of(["c1", "c2", "c3"])
    assert halves == {"choose": ["c1", "c2"], "confirm": ["c3"]}

    def asked(bank: str, evidence: tuple[str, ...], ranked: tuple[str, ...]) -> QuestionResult:
        return QuestionResult(
            bank=bank,
            qid=f"{bank}-{len(ranked)}",
            category=2,
            category_name="knowledge_update",
            evidence=evidence,
            ranked=ranked,
            seconds=0.1,
        )

    report = aggregate(
        [
            asked("c3", ("m1",), ("m1",)),  # listed first: the split is by chat, not order
            asked("c1", ("m1", "m2"), ("m1", "x", "x", "x", "x", "m2")),
            asked("c2", ("m5",), ("x",) * 6),
            asked("c2", (), ("x",)),  # no evidence: asked, not scored
        ],
        ks=(5, 10),
    )
    scores = half_scores(report, halves)
    assert scores["choose"].questions == 2 and scores["choose"].skipped == 1
    assert scores["choose"].recall == {5: pytest.approx(0.25), 10: pytest.approx(0.5)}
    assert scores["confirm"].questions == 1
    assert scores["confirm"].recall == {5: 1.0, 10: 1.0}


def _bank(days: dict[date, int]) -> BankData:
    items = []
    for day, count in days.items():
        for n in range(count):
            speaker = "Ana" if n % 2 else "Ben"
            items.append(
                {
                    "text": f"{speaker} said something on {day}",
                    "occurred_start": f"{day.isoformat()}T10:00:00",
                    "metadata": {"dia_id": f"{day.isoformat()}:{n}", "speaker": speaker},
                }
            )
    return BankData(bank="b", items=tuple(items), questions=())


def test_generated_questions_expect_exactly_their_periods_memories() -> None:
    bank = _bank(
        {
            date(2023, 5, 20): MIN_PERIOD_MEMORIES,
            date(2023, 6, 3): MIN_PERIOD_MEMORIES,
            date(2023, 7, 30): MIN_PERIOD_MEMORIES,
            date(2023, 12, 24): MIN_PERIOD_MEMORIES,
            date(2024, 2, 2): 3,  # too thin a month to be asked about alone
        }
    )
    asked_at = datetime(2024, 3, 1, tzinfo=UTC)
    questions = time_questions(bank, asked_at)
    by_text = {q.question: q for q in questions}

    june = by_text["What did Ben talk about in June 2023?"]
    assert june.period == Period(date(2023, 6, 1), date(2023, 7, 1))
    assert june.in_window == {f"2023-06-03:{n}" for n in range(MIN_PERIOD_MEMORIES)}
    assert june.query_time == asked_at

    summer = by_text["What happened in the summer of 2023?"]
    assert len(summer.in_window) == 2 * MIN_PERIOD_MEMORIES  # June and July, not May
    # the winter that began in December 2023 holds February 2024 too
    winter = by_text["What happened in the winter of 2023?"]
    assert len(winter.in_window) == MIN_PERIOD_MEMORIES + 3

    relative = [q for q in questions if q.shape == "relative"]
    assert {q.query_time for q in relative} >= {datetime(2023, 7, 15, 12, tzinfo=UTC)}
    assert not any(q.shape == "month" and "February 2024" in q.question for q in questions)


def test_every_generated_question_names_the_period_it_is_scored_on() -> None:
    # The engine's own parser must read the same period from the words the benchmark
    # scores against, or the benchmark would measure the generator, not the recall.
    bank = _bank({date(2022, m, 10): MIN_PERIOD_MEMORIES for m in range(1, 13)})
    for q in time_questions(bank, datetime(2023, 1, 5, tzinfo=UTC)):
        window = extract_time_window(q.question, q.query_time)
        assert window is not None and window.start is not None and window.end is not None, q
        assert window.start.date() == q.period.start, q
        assert (window.end + timedelta(microseconds=1)).date() == q.period.end, q

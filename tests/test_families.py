"""The question-family benchmark's own arithmetic: window precision, its floor, and the
time-scoped questions it generates from a conversation's dates."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from benchmarks.event_questions import event_score, placed_by_an_event
from benchmarks.families import (
    PERSONAS,
    event_rows,
    half_scores,
    halves_of,
    window_floor,
    window_precision,
)
from benchmarks.families import main as families_main
from benchmarks.time_questions import MIN_PERIOD_MEMORIES, Period, time_questions
from hindsight_tools.evaluation import (
    ADVERSARIAL_NAME,
    BankData,
    Dataset,
    Question,
    QuestionResult,
    aggregate,
    load_dataset,
)
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


def _bank(days: dict[date, int], speakers: tuple[str, str] = ("Ben", "Ana")) -> BankData:
    items = []
    for day, count in days.items():
        for n in range(count):
            speaker = speakers[n % 2]
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

    joined = by_text["What did Ben do in June and July 2023?"]
    assert joined.period == Period(date(2023, 6, 1), date(2023, 8, 1))
    assert len(joined.in_window) == 2 * MIN_PERIOD_MEMORIES

    # the week of June 3, 2023 (a Saturday) is Monday May 29 to Sunday June 4
    week = by_text["What did Ben do the week before June 8, 2023?"]
    assert week.period == Period(date(2023, 5, 29), date(2023, 6, 5))
    assert week.in_window == june.in_window
    # told on the Thursday after that week: the week and the days up to that Thursday
    told = [q for q in questions if q.shape == "told on a day"]
    assert told and all(q.query_time == asked_at for q in told)
    # May 20, 2023 is a Saturday: Monday May 15, told on Thursday May 25
    (may_told,) = [q for q in told if "May 25, 2023" in q.question]
    assert may_told.question == "What did Ana talk about last week, as mentioned on May 25, 2023?"
    assert may_told.period == Period(date(2023, 5, 15), date(2023, 5, 26))
    assert may_told.in_window == {f"2023-05-20:{n}" for n in range(MIN_PERIOD_MEMORIES)}

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


def test_a_user_assistant_chat_is_asked_about_by_its_user() -> None:
    bank = _bank(
        {date(2024, 3, 15): MIN_PERIOD_MEMORIES, date(2024, 4, 5): MIN_PERIOD_MEMORIES},
        speakers=("user", "assistant"),
    )
    texts = {q.question for q in time_questions(bank, datetime(2024, 4, 25, tzinfo=UTC))}
    assert "What did I talk about in March 2024?" in texts
    assert "What did I talk about in April 2024?" in texts
    assert not any("user" in t or "assistant" in t for t in texts), texts


def test_a_period_holding_the_whole_bank_is_not_asked_about() -> None:
    # Every order of the bank would be entirely inside such a period: it measures nothing.
    bank = _bank({date(2024, 3, 15): MIN_PERIOD_MEMORIES, date(2024, 4, 5): MIN_PERIOD_MEMORIES})
    questions = time_questions(bank, datetime(2024, 4, 25, tzinfo=UTC))
    assert not any(q.shape in ("season", "month range") for q in questions), questions
    assert all(len(q.in_window) == MIN_PERIOD_MEMORIES for q in questions)
    assert {q.shape for q in questions} == {
        "month",
        "relative",
        "month of last year",
        "week before",
        "told on a day",
    }


def _chat_records(bank: str, topics: dict[str, str]) -> list[dict[str, object]]:
    """A user–assistant chat in the converter's format: one session a day, ten turns each."""
    records: list[dict[str, object]] = []
    for session, (day, topic) in enumerate(topics.items(), start=1):
        for n in range(MIN_PERIOD_MEMORIES):
            speaker = "user" if n % 2 == 0 else "assistant"
            records.append(
                {
                    "bank": bank,
                    "id": f"{bank}:M{len(records)}",
                    "dia_id": f"M{len(records)}",
                    "session": session,
                    "occurred_at": f"{day}T00:00:00",
                    "speaker": speaker,
                    "text": f"{speaker}: about the {topic}, step {n}: what to do next with the "
                    f"{topic}",
                }
            )
    return records


def test_time_scoped_questions_are_asked_of_a_chat_data_set(
    scratch_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chats whose sessions talk of the same few topics: only the question's period tells
    # which session it asks about, so a recall blind to time sits near the floor.
    topics = ["garden shed", "tax return", "piano lessons"]
    chats = {
        "chat-1": dict(zip(["2024-03-15", "2024-04-05", "2024-05-20"], topics, strict=True)),
        "chat-2": dict(zip(["2024-06-02", "2024-07-11", "2024-08-19"], topics, strict=True)),
    }
    folder = tmp_path / "chats"
    folder.mkdir()
    lines = [json.dumps(r) for bank, days in chats.items() for r in _chat_records(bank, days)]
    (folder / "memories.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "queries.jsonl").write_text("")
    monkeypatch.setenv("HINDSIGHT_API_DATABASE_URL", scratch_db)
    monkeypatch.setenv("HINDSIGHT_API_RERANKER_PROVIDER", "passthrough")
    out, dump = tmp_path / "families.md", tmp_path / "families.json"
    argv = ["--skip", "locomo", "persona", "--beam", str(folder)]
    assert families_main([*argv, "--out", str(out), "--json", str(dump)]) == 0

    report = out.read_text()
    for half, bank in (("choose", "chat-1"), ("confirm", "chat-2")):
        assert f"## Time-scoped questions on BEAM, {half} half" in report
        asked = json.loads(dump.read_text())[f"beam-time-{half}"]["questions"]
        assert {q["bank"] for q in asked} == {bank}
        # a month, a relative question and the week before for each session's month, the
        # second and third months joined, the second asked a year on, the first and third
        # weeks as told on a day; the season and the month range hold the whole chat and
        # are not asked
        assert len(asked) == 13
    rows = [line for line in report.splitlines() if line.startswith("| all |")]
    assert len(rows) == 2
    for row in rows:
        _, _, _, p5, _, floor, _ = (cell.strip() for cell in row.split("|"))
        assert float(p5) >= 0.8 > float(floor), row


@pytest.mark.parametrize("folder", PERSONAS, ids=lambda p: p.name)
def test_a_persona_time_question_expects_exactly_its_periods_memories(folder: Path) -> None:
    # The personas' expected ids are written by hand: for a time question they must be the
    # memories the engine's own parser puts inside the period the question names.
    (bank,) = load_dataset(folder).banks
    days = {item["metadata"]["dia_id"]: item["occurred_start"] for item in bank.items}
    timed = [q for q in bank.questions if q.category_name == "time"]
    assert len(timed) >= 8
    for q in timed:
        window = extract_time_window(q.question, datetime.fromisoformat(str(q.query_time)))
        assert window is not None and window.start is not None and window.end is not None, q
        start, end = window.start.replace(tzinfo=None), window.end.replace(tzinfo=None)
        inside = {i for i, day in days.items() if start <= _naive(day) <= end}
        assert set(q.evidence) == inside, q.question
    assert all(set(q.evidence) <= set(days) for q in bank.questions)


def _naive(value: object) -> datetime:
    return datetime.fromisoformat(str(value)).replace(tzinfo=None)


def test_the_questions_placed_by_an_event_are_those_recall_reads_so() -> None:
    def question(qid: str, text: str, category: str = "single-hop") -> Question:
        return Question(qid, text, 4, category, ("m1",), "2024-06-12T00:00:00")

    bank = BankData(
        "c1",
        (),
        (
            question("why", "Why did Priya leave Lumen Health?"),
            question("after", "What did Priya do after she moved to Amsterdam?"),
            # a period named by its dates ranks instead; a vague one ranks nothing
            question("dated", "Why did Priya fly to Austin in March 2023?"),
            question("vague", "What did Priya do after she moved recently?"),
            # left out of every overall row, so of this one too
            question("trick", "Why did Priya leave Harbor Labs?", ADVERSARIAL_NAME),
            question("plain", "Where does Priya work?"),
        ),
    )
    placed = placed_by_an_event([Dataset(banks=(bank,))])
    assert placed == {"why", "after", "vague"}

    def asked(qid: str, ranked: tuple[str, ...]) -> QuestionResult:
        return QuestionResult(
            bank="c1",
            qid=qid,
            category=4,
            category_name="single-hop",
            evidence=("m1",),
            ranked=ranked,
            seconds=0.1,
        )

    report = aggregate([asked("why", ("m1",)), asked("plain", ("x",)), asked("after", ("x",))])
    score = event_score(report, placed, "LoCoMo, choose half")
    assert (score.name, score.questions, score.recall[5]) == ("LoCoMo, choose half", 2, 0.5)
    assert event_rows([score], (5, 10))[2] == "| LoCoMo, choose half | 2 | 0.500 | 0.500 |"

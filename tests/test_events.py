"""Which side of an event a question asks about, and the period that side names once the
event is dated (query/events.py, recall/anchored.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from hindsight_tools.query.events import event_relation
from hindsight_tools.query.window import TimeWindow
from hindsight_tools.recall.anchored import ANCHOR_CANDIDATES, anchored_window, event_anchor


@pytest.mark.parametrize(
    ("question", "relation"),
    [
        ("Why did Lucía leave Atlântico Engenharia?", "cause"),
        ("why was the viaduct closed to heavy trucks?", "cause"),
        ("Why didn't Priya run the marathon?", "cause"),
        ("What was the reason for the breakup?", "cause"),
        ("What made Gina choose the furniture for her store?", "cause"),
        ("What inspired John to join the marching event?", "cause"),
        ("What did Melanie do after the road trip to relax?", "after"),
        ("What did Alice do after she left Google?", "after"),
        ("What plans did Jon make after receiving advice at the networking event?", "after"),
        ("How has John's fitness improved since starting boot camps?", "after"),
        ("What changed in the team after Mark was promoted?", "after"),
        ("What did Jean go through before meeting Maria?", "before"),
        ("Which city was John in before traveling to Chicago?", "before"),
        ("What did I work on prior to the launch?", "before"),
        ("Where did Lucía live until her move to Porto?", "before"),
        ("What did I train for in the run-up to the race?", "before"),
        ("What did we decide after that meeting?", "after"),
        ("Since moving to Porto, what has Lucía done?", "after"),
        # a cause wins: what led to the joining, the visit before it among them
        ("Why did John join the army after the hospital visit?", "cause"),
        ("Why did she sell the car before her move?", "cause"),
        # a place word earlier in the text doesn't hide a time later on
        ("Which line did I fix after the release went out?", "after"),
        # past forms: "didn't", a verb in -ed after its subject, a place verb in the past
        ("What didn't Caroline enjoy after the adoption?", "after"),
        ("I used the wrong flag before the merge, what did it break?", "before"),
        ("Where did we go after the concert?", "after"),
        ("What came before the breakup?", "before"),
        ("What has changed since I started the new job?", "after"),
        # "sat", lowercase ("Sat" is a Saturday)
        ("Who sat next to me after the keynote?", "after"),
    ],
)
def test_a_question_placed_by_an_event(question: str, relation: str) -> None:
    assert event_relation(question) == relation


@pytest.mark.parametrize(
    "question",
    [
        "Where does Alice work?",
        # a present state: its reason may be told at any time
        "Why does Nate like turtles as pets?",
        "Why is Joanna experimenting with dairy-free desserts?",
        # no event after the word (each in a question about the past, which is read)
        "What did I do after work?",
        "Did I eat before lunch?",
        "After all, what did we decide?",
        "What did I say before anything else?",
        "What did I do after that?",
        "What did she do after that happened?",
        # "since" giving a reason, not a time
        "Since I'm vegan, what did we order?",
        "Since my wife is vegan, what did we cook?",
        # no tense to read: a state as often as an event
        "How come she liked the turtles?",
        # a habit, an aside, "once" as a count
        "What did I usually do after I woke up?",
        "Before I forget, what did I say my locker number was?",
        "Once a week I went running; where?",
        # both sides of one event
        "What did I do before and after the move?",
        # no event that happened: a plan, a rule, a bug, a routine, -ed adjectives
        "What should I check before deploying?",
        "Always run the tests before you commit.",
        "It crashes after the user clicks submit.",
        "What does John want to do after his basketball career?",
        "Is it normal to feel tired after running?",
        "What should I check before deploying the updated service?",
        "What should I study before the SAT?",
        "What do I need to finish before Sat?",
        # a place or an order, not a time
        "What comes after the header in the template I wrote?",
        "Who looked after the kids when I was away?",
        # "the following …" and asides
        "Summarize the following meeting notes I wrote.",
        "What did we do after that and why?",
        "Before answering, what did I say about Rust?",
        # the time between two events, their order or a count needs more than one side
        "How many days after I submitted my cover letter did I meet Greg?",
        "How long after the move did Biscuit arrive?",
        "Which happened first: the launch or the promotion after the launch?",
        "What happened between the launch and my promotion?",
    ],
)
def test_no_event_relation(question: str) -> None:
    assert event_relation(question) is None


NOON = datetime(2023, 2, 25, 12, 30, tzinfo=UTC)
END_OF_DAY = datetime(2023, 2, 25, 23, 59, 59, 999999, tzinfo=UTC)


def test_the_period_before_an_event_ends_with_its_day() -> None:
    window = anchored_window("cause", NOON, 180)
    assert window == TimeWindow(datetime(2022, 8, 29, tzinfo=UTC), END_OF_DAY)
    assert anchored_window("before", NOON, 180) == window


def test_the_period_after_an_event_starts_with_its_day() -> None:
    window = anchored_window("after", NOON, 10)
    assert window == TimeWindow(
        datetime(2023, 2, 25, tzinfo=UTC), datetime(2023, 3, 7, 23, 59, 59, 999999, tzinfo=UTC)
    )
    assert window.days() == 11


def test_the_day_of_an_event_is_its_day_in_utc() -> None:
    # 2023-02-25 21:00 in New York is the 26th in UTC; a naive time is UTC already
    evening = datetime(2023, 2, 25, 21, tzinfo=timezone(timedelta(hours=-5)))
    window = anchored_window("after", evening, 1)
    assert window.start == datetime(2023, 2, 26, tzinfo=UTC)
    assert window.start is not None and window.start.utcoffset() == timedelta(0)
    assert anchored_window("cause", NOON.replace(tzinfo=None), 180).end == END_OF_DAY


def test_a_side_past_the_calendar_is_left_open() -> None:
    first, last = datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 12, tzinfo=UTC)
    assert anchored_window("cause", first, 180) == TimeWindow(
        None, datetime(1, 1, 1, 23, 59, 59, 999999, tzinfo=UTC)
    )
    assert anchored_window("after", last, 180) == TimeWindow(
        datetime(9999, 12, 31, tzinfo=UTC), None
    )
    assert anchored_window("before", last, 180).end is None


def test_the_event_is_the_first_dated_of_the_best_matches() -> None:
    earlier = datetime(2020, 1, 1, tzinfo=UTC)
    ranked = [("a", None), ("b", NOON), ("c", earlier)]
    # the best match, not the far edge of the best few: not "c", the earliest, for "after"
    assert event_anchor(ranked) == ("b", NOON)
    assert event_anchor([("c", earlier), ("b", NOON)]) == ("c", earlier)
    assert event_anchor([]) is None
    # a dated memory ranked past the first few is no longer the event the question names
    first: list[tuple[str, datetime | None]] = [(str(i), None) for i in range(ANCHOR_CANDIDATES)]
    assert event_anchor([*first, ("late", NOON)]) is None

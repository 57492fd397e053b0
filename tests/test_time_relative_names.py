"""Names inside a relative unit ("March of last year", "Monday of last week") and names in
a question about a habit ("What do I usually do in summer?"): pure, no database.

The same fixed ``NOW`` and conventions as ``test_temporal.py``: Wednesday 2024-06-12,
15:30 UTC; ends inclusive (``E``).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hindsight_tools.query.rewrites import pin_relative_names
from hindsight_tools.query.time_window import extract_time_window
from tests.test_temporal import NOW, E, assert_exact_window, at

IN_UNITS = [
    # a name in a relative year is that name in that year, not its latest occurrence
    ("What did I do in March of last year?", "2023-03-01", "2023-03-31" + E),
    ("in March last year", "2023-03-01", "2023-03-31" + E),
    ("Last year in March, where did we go?", "2023-03-01", "2023-03-31" + E),
    ("What did I do last year in May?", "2023-05-01", "2023-05-31" + E),
    ("in the summer of last year", "2023-06-01", "2023-08-31" + E),
    ("in the summer of the previous year", "2023-06-01", "2023-08-31" + E),
    ("in Q1 of next year", "2025-01-01", "2025-03-31" + E),
    ("in H1 of last year", "2023-01-01", "2023-06-30" + E),
    ("at Christmas two years ago", "2022-12-24", "2022-12-26" + E),
    ("in December of the year before last", "2022-12-01", "2022-12-31" + E),
    ("in March two years ago", "2022-03-01", "2022-03-31" + E),
    ("in March 2 years ago", "2022-03-01", "2022-03-31" + E),
    ("in August of this year", "2024-08-01", "2024-08-31" + E),
    ("mid-March of last year", "2023-03-11", "2023-03-20" + E),
    ("in March and April of last year", "2023-03-01", "2023-04-30" + E),
    # the word before the unit reads the pinned name
    ("since last year in March", "2023-03-01", None),
    ("until last year in the summer", None, "2023-08-31" + E),
    ("between last year in March and now", "2023-03-01", "2024-06-12T15:30:00"),
    # the one before "last X", as "the week before last" is the week before last week
    ("What did I do the summer before last?", "2022-06-01", "2022-08-31" + E),
    ("in the winter before last", "2022-12-01", "2023-02-28" + E),
    ("the March before last", "2023-03-01", "2023-03-31" + E),
    ("the Christmas before last", "2022-12-24", "2022-12-26" + E),
    ("the Monday before last", "2024-06-03", "2024-06-03" + E),
    # "this time last year": some days either side of that day; "a year ago today" the day
    ("This time last year I was in Paris", "2023-05-29", "2023-06-26" + E),
    ("around this time last year", "2023-05-29", "2023-06-26" + E),
    ("this time next month", "2024-07-09", "2024-07-15" + E),
    ("What did I do this time last week?", "2024-06-05", "2024-06-05" + E),
    ("a year ago today", "2023-06-12", "2023-06-12" + E),
    # after "since", "until", … "this time last year" is the day
    ("Since this time last year, how many books did I read?", "2023-06-12", None),
    ("between this time last year and now", "2023-06-12", "2024-06-12T15:30:00"),
    ("from this time last year to now", "2023-06-12", "2024-06-12T15:30:00"),
    ("What photos do I have from this time last year?", "2023-05-29", "2023-06-26" + E),
    ("How does my weight compare to this time last year?", "2023-05-29", "2023-06-26" + E),
    # the rewrites read any case
    ("WHAT DID I DO IN MARCH OF LAST YEAR?", "2023-03-01", "2023-03-31" + E),
    # a weekday in a relative week is that day of that Monday-Sunday week
    ("What did I do on Monday of last week?", "2024-06-03", "2024-06-03" + E),
    ("Tuesday last week", "2024-06-04", "2024-06-04" + E),
    ("on Monday and Tuesday of last week", "2024-06-03", "2024-06-04" + E),
    ("on Friday of next week", "2024-06-21", "2024-06-21" + E),
    ("on Friday of this week", "2024-06-14", "2024-06-14" + E),
    ("Last week on Monday I", "2024-06-03", "2024-06-03" + E),
    ("two weeks ago Friday", "2024-05-31", "2024-05-31" + E),
    # "the last year", "the last week" are rolling: the name is its latest in them
    ("Did I travel in March in the last year?", "2024-03-01", "2024-03-31" + E),
    ("on Monday in the last week", "2024-06-10", "2024-06-10" + E),
    # a look-alike without a word that makes it a time is not a name: the unit alone
    ("When did I fall last year?", "2023-01-01", "2023-12-31" + E),
    ("We visited a hot spring last year", "2023-01-01", "2023-12-31" + E),
    ("Did we march last year?", "2023-01-01", "2023-12-31" + E),
    ("I met April last year", "2023-01-01", "2023-12-31" + E),
    ("I applied for my H1 last year", "2023-01-01", "2023-12-31" + E),
    ("I ran on Monday, last week I swam", "2024-06-10", "2024-06-10" + E),
    ("Did I talk to April last year?", "2023-01-01", "2023-12-31" + E),
    ("What did I get from April last year?", "2023-01-01", "2023-12-31" + E),
    ("Did Summer and April last year visit?", "2023-01-01", "2023-12-31" + E),
    # after "from", a name is a time before a range's second half
    ("from March of last year to now", "2023-03-01", "2024-06-12T15:30:00"),
    ("What did I do from March to May of last year?", "2023-03-01", "2023-05-31" + E),
    ("from June last year onwards", "2023-06-01", None),
    ("What books have I read from March last year onwards in total?", "2023-03-01", None),
    # "on" ends a range only at the end of a clause
    ("What did I get from April last year on my birthday?", "2023-01-01", "2023-12-31" + E),
    ("in the spring and summer of last year", "2023-03-01", "2023-08-31" + E),
    # a pinned year the rules would not read as one is left alone
    ("in March 2000 years ago", "2000-03-01", "2000-03-31" + E),
    # a habit with a period of its own is about that period
    ("What did I usually eat last summer?", "2023-06-01", "2023-08-31" + E),
    ("Where do I usually go in summer 2023", "2023-06-01", "2023-08-31" + E),
    ("What have I typically been eating since January?", "2024-01-01", None),
    ("What did I typically eat between March and May?", "2024-03-01", "2024-05-31" + E),
    ("What did I do in summer? I usually forget.", "2024-06-01", "2024-08-31" + E),
    ("What did I do in summer, and where do I usually go?", "2024-06-01", "2024-08-31" + E),
    ("I usually skip breakfast, but what did I eat on Monday?", "2024-06-10", "2024-06-10" + E),
    (
        "What do I usually do in summer, and what did I do yesterday?",
        "2024-06-11",
        "2024-06-11" + E,
    ),
    ("What do I usually do in March? What did I do in May?", "2024-05-01", "2024-05-31" + E),
    (
        "What do I usually eat on Monday, and what did I eat on Friday?",
        "2024-06-07",
        "2024-06-07" + E,
    ),
    # a weekday of a weekend counted back is of that weekend's week
    ("What did I do on Saturday two weekends ago?", "2024-06-01", "2024-06-01" + E),
    ("on Sunday last weekend", "2024-06-09", "2024-06-09" + E),
    ("last weekend on Saturday", "2024-06-08", "2024-06-08" + E),
    # a season or holiday counted back is the one so many before the latest
    ("What did I do two summers ago?", "2022-06-01", "2022-08-31" + E),
    ("a couple of summers ago", "2022-06-01", "2022-08-31" + E),
    ("two winters ago", "2022-12-01", "2023-02-28" + E),
    ("three Christmases ago", "2021-12-24", "2021-12-26" + E),
    # words that are not "as a rule"
    ("Did I often go running in March?", "2024-03-01", "2024-03-31" + E),
    ("Did the backup run normally on Friday?", "2024-06-07", "2024-06-07" + E),
    ("Was the team generally happy in March?", "2024-03-01", "2024-03-31" + E),
]


@pytest.mark.parametrize(("text", "start", "end"), IN_UNITS, ids=[c[0] for c in IN_UNITS])
def test_name_in_a_unit_resolves_to_exact_window(
    text: str, start: str | None, end: str | None
) -> None:
    assert_exact_window(text, start, end)


@pytest.mark.parametrize(
    "text",
    [
        "What do I usually do in summer?",
        "What do I usually do in summer and winter?",
        "What do I usually do on Monday?",
        "In summer I typically go hiking",
        "During Thanksgiving, we usually watch a few movies.",
        "What does she habitually cook in the spring?",
        # a part of the unit holding now
        "What do I usually do midweek?",
        "What do I usually pay at the end of the month?",
        "What do I typically do early in the year?",
        # "like" and "as" before other words than a comparison's
        "What do I like to do usually in summer?",
        "What do we as a family usually do in the summer?",
        "What is the way I usually commute in winter?",
    ],
)
def test_a_bare_name_in_a_habit_is_no_time(text: str) -> None:
    assert extract_time_window(text, NOW) is None


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("Did I spend more than I usually do in March?", "2024-03-01", "2024-03-31" + E),
        (
            "Did I pay my rent by the end of the month, as I usually do?",
            "2024-05-21",
            "2024-05-31" + E,
        ),
        ("Did I sleep more than usually at the end of the week?", "2024-06-06", "2024-06-09" + E),
        ("Did I run more in March than I'd usually do?", "2024-03-01", "2024-03-31" + E),
    ],
)
def test_a_period_compared_with_a_habit_is_one_period(text: str, start: str, end: str) -> None:
    found = extract_time_window(text, NOW)
    assert found is not None and (found.start, found.end) == (at(start), at(end))


@pytest.mark.parametrize(
    ("text", "pinned"),
    [
        ("in March of last year", "in March of 2023"),
        ("last year over Christmas", "Christmas of 2023"),
        ("on Monday of last week", "on June 3, 2024"),
        ("in March several years ago", "in March several years ago"),
        ("the past year in March", "the past year in March"),
        ("in the winter of last year", "in the winter of last year"),
        ("two summers ago", "the summer of 2022"),
        ("several summers ago", "several summers ago"),
        ("0 summers ago", "0 summers ago"),
        ("in March in the last year", "in March in the last year"),
    ],
)
def test_names_are_pinned_in_the_text(text: str, pinned: str) -> None:
    assert pin_relative_names(text, NOW) == pinned


@pytest.mark.parametrize(
    "text",
    [
        "in March 9999 years ago",
        "in March 2000 years ago",
        "Monday 99999999 weeks ago",
        "9999 summers ago",
    ],
)
def test_a_unit_outside_the_years_read_is_left_alone(text: str) -> None:
    assert pin_relative_names(text, NOW) == text


FIRST_WEEK = (datetime(1, 1, 1, tzinfo=UTC), datetime(1, 1, 7, 23, 59, 59, 999999, tzinfo=UTC))


@pytest.mark.parametrize(
    ("text", "now", "expected"),
    [
        # the open side would fall before year 1: what is left to read is "this week"
        ("before this week", datetime(1, 1, 1, tzinfo=UTC), FIRST_WEEK),
        ("since Sunday of this week", datetime(1, 1, 1, tzinfo=UTC), FIRST_WEEK),
        ("after 9999", NOW, None),
    ],
)
def test_an_open_side_past_the_calendar_leaves_the_period_itself(
    text: str, now: datetime, expected: tuple[datetime, datetime] | None
) -> None:
    found = extract_time_window(text, now)
    assert (found.start, found.end) == expected if found else expected is None


@pytest.mark.parametrize(
    ("text", "now", "start", "end"),
    [
        # counted back from the latest that has fully ended, not from this year
        ("two summers ago", datetime(2024, 10, 15, tzinfo=UTC), "2023-06-01", "2023-08-31" + E),
        (
            "three Christmases ago",
            datetime(2024, 12, 28, tzinfo=UTC),
            "2022-12-24",
            "2022-12-26" + E,
        ),
        ("two Junes ago", datetime(2024, 6, 12, tzinfo=UTC), "2022-06-01", "2022-06-30" + E),
        ("three Januaries ago", datetime(2024, 6, 12, tzinfo=UTC), "2022-01-01", "2022-01-31" + E),
        (
            "a couple of Decembers ago",
            datetime(2025, 1, 6, tzinfo=UTC),
            "2023-12-01",
            "2023-12-31" + E,
        ),
    ],
)
def test_seasons_and_holidays_counted_back_from_the_latest(
    text: str, now: datetime, start: str, end: str
) -> None:
    found = extract_time_window(text, now)
    assert found is not None and (found.start, found.end) == (at(start), at(end))

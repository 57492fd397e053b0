"""Time windows of two expressions joined, and the forms read with them: pure, no database.

The same fixed ``NOW`` and conventions as ``test_temporal.py``: Wednesday 2024-06-12,
15:30 UTC; ends inclusive (``E``).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hindsight_tools.query.time_window import TimeWindow, extract_time_window
from tests.test_temporal import E, assert_exact_window, at, window

PAIRS = [
    # a second expression without its year joins only a first of its own kind: after
    # "and" a month or season name is as often a word
    ("What did I do in January and February?", "2024-01-01", "2024-02-29" + E),
    ("during the spring and the summer", "2024-03-01", "2024-08-31" + E),
    ("What did we do on Monday and Tuesday?", "2024-06-10", "2024-06-11" + E),
    ("in December and January", "2023-12-01", "2024-01-31" + E),
    ("in Q1 and Q2", "2024-01-01", "2024-06-30" + E),
    # a first with its year: the second is the first such after it
    ("in January 2023 and March", "2023-01-01", "2023-03-31" + E),
    ("in December 2023 and January", "2023-12-01", "2024-01-31" + E),
    ("during the summer of 2021 and the fall", "2021-06-01", "2021-11-30" + E),
    ("in Q3 2023 and Q4", "2023-07-01", "2023-12-31" + E),
    ("in June 2023 and fall asleep", "2023-06-01", "2023-06-30" + E),
    ("in June and fall asleep", "2024-06-01", "2024-06-30" + E),
    ("in May and date nights", "2024-05-01", "2024-05-31" + E),
    ("in January and may go", "2024-01-01", "2024-01-31" + E),
    ("on Tuesday and Thursday mornings", "2024-06-11", "2024-06-11" + E),
    ("in the spring and fall semesters", "2024-03-01", "2024-05-31" + E),
    # after "last", the first as "last" reads it and the second from its start
    ("What did I do last summer and fall?", "2023-06-01", "2023-11-30" + E),
    ("last fall and winter", "2023-09-01", "2024-02-29" + E),
    ("What did she do last June and July?", "2023-06-01", "2023-07-31" + E),
    ("last June to August", "2023-06-01", "2023-08-31" + E),
    ("What did I do last Monday and Tuesday?", "2024-06-10", "2024-06-11" + E),
    # the second not begun before the day of asking: the first one before
    ("What did I do last Monday through Friday?", "2024-06-03", "2024-06-07" + E),
    # "and": either order, the one with more names as "last" alone reads them
    ("last Sunday and Saturday", "2024-06-08", "2024-06-09" + E),
    ("last fall and summer", "2023-06-01", "2023-11-30" + E),
    # "fall" as a verb
    ("What did I do last summer and fall asleep?", "2023-06-01", "2023-08-31" + E),
    ("in the summer and fall behind", "2024-06-01", "2024-08-31" + E),
    ("What did I do last summer and fall over the holidays?", "2023-06-01", "2023-11-30" + E),
    ("last Monday and Tuesday mornings", "2024-06-10", "2024-06-10" + E),
    # a year alone after "and"/"or" is the first's period in that year; after "between"
    # or "-" the range runs to its end
    ("What did I do in the spring of 2023 and 2024?", "2023-03-01", "2024-05-31" + E),
    ("in May 2022 or 2023", "2022-05-01", "2023-05-31" + E),
    ("at Christmas 2022 and 2023", "2022-12-24", "2023-12-26" + E),
    ("in the summers of 2022 and 2023", "2022-06-01", "2023-08-31" + E),
    ("in 2022 and 2023", "2022-01-01", "2023-12-31" + E),
    ("between May 2022 and 2023", "2022-05-01", "2023-12-31" + E),
    ("in May 2022-2023", "2022-05-01", "2023-12-31" + E),
    # "and", "or": the two in whichever order is nearer
    ("Did I call her on Friday or Thursday?", "2024-06-06", "2024-06-07" + E),
    ("Did we talk in April or March?", "2024-03-01", "2024-04-30" + E),
    # a bare day after a date, a half before one with its year, weeks of any period
    ("What happened between June 3 and 5?", "2024-06-03", "2024-06-05" + E),
    ("between June 3 and 5 pm", "2024-06-03", "2024-06-03" + E),
    ("between June 3 and 5 in the afternoon", "2024-06-03", "2024-06-03" + E),
    ("What happened between March 3 and 5, 2023?", "2023-03-03", "2023-03-05" + E),
    ("between May 28 and 2", "2024-05-28", "2024-05-28" + E),
    ("H1 and H2 2023", "2023-01-01", "2023-12-31" + E),
    ("the first week of 2023", "2023-01-01", "2023-01-07" + E),
    ("the last week of 2023", "2023-12-25", "2023-12-31" + E),
    ("the first week of summer 2023", "2023-06-01", "2023-06-07" + E),
    # a fortnight is two weeks
    ("in the last fortnight", "2024-05-29T15:30", "2024-06-12T15:30"),
    ("a fortnight ago", "2024-05-27", "2024-06-02" + E),
    # from a placed start to a bare name: its next occurrence, when the latest has ended
    ("What will I do from today until Christmas?", "2024-06-12", "2024-12-26" + E),
    ("between now and March", "2024-06-12T15:30", "2025-03-31" + E),
    ("from today until Monday", "2024-06-12", "2024-06-17" + E),
    ("from March 2024 until February", "2024-03-01", "2025-02-28" + E),
    # from X's start: "the end of the year" is September to December
    ("from now until the end of the year", "2024-06-12T15:30", "2024-12-31" + E),
    ("from today until the end of the week", "2024-06-12", "2024-06-16" + E),
    ("Push the release date to January 2025", "2025-01-01", "2025-01-31" + E),
    ("between today and June 2025", "2024-06-12", "2025-06-30" + E),
    # neither placed: the first before the second, as before
    ("What happened from June until March?", "2023-06-01", "2024-03-31" + E),
    ("What did I do from Monday until Friday?", "2024-06-03", "2024-06-07" + E),
    ("What did I do between last Tuesday and Thursday?", "2024-06-04", "2024-06-06" + E),
    ("between the last week of May and June 2023", "2023-05-25", "2023-06-30" + E),
    # a day of the month a month on
    ("from now until the 1st of the month", "2024-06-12T15:30", "2024-07-01" + E),
    # counted from the first end when it lies ahead
    ("from next week until Friday", "2024-06-17", "2024-06-21" + E),
    # a first end holding now moves a bare second end too; "last week" doesn't
    ("from this month until August", "2024-06-01", "2024-08-31" + E),
    ("from this week until Friday", "2024-06-10", "2024-06-14" + E),
]


@pytest.mark.parametrize(("text", "start", "end"), PAIRS, ids=[c[0] for c in PAIRS])
def test_pair_resolves_to_exact_window(text: str, start: str | None, end: str | None) -> None:
    assert_exact_window(text, start, end)


LAST_PAIRS_ASKED = [
    # the first as "last" reads it, the second from its start, if begun before that day
    ("last summer and fall", datetime(2024, 10, 15, tzinfo=UTC), "2024-06-01", "2024-11-30" + E),
    ("last fall and winter", datetime(2024, 1, 15, tzinfo=UTC), "2023-09-01", "2024-02-29" + E),
    ("last June to August", datetime(2024, 7, 15, tzinfo=UTC), "2023-06-01", "2023-08-31" + E),
    # either order: the one with more names as "last" alone reads them, else as written
    (
        "last Monday and Tuesday",
        datetime(2024, 3, 12, 9, tzinfo=UTC),
        "2024-03-05",
        "2024-03-11" + E,
    ),
    (
        "last Monday and Friday",
        datetime(2024, 6, 15, 9, tzinfo=UTC),
        "2024-06-10",
        "2024-06-14" + E,
    ),
    ("last spring and fall", datetime(2024, 12, 10, tzinfo=UTC), "2024-03-01", "2024-11-30" + E),
    ("last summer and winter", datetime(2024, 10, 15, tzinfo=UTC), "2023-12-01", "2024-08-31" + E),
    ("last July and January", datetime(2025, 2, 10, tzinfo=UTC), "2024-07-01", "2025-01-31" + E),
    # as many as "last" reads them either way: the one of fewer months, else as written
    ("last spring and fall", datetime(2024, 10, 15, tzinfo=UTC), "2024-03-01", "2024-11-30" + E),
    ("last July and June", datetime(2024, 6, 15, tzinfo=UTC), "2023-06-01", "2023-07-31" + E),
    (
        "last January and December",
        datetime(2024, 1, 15, tzinfo=UTC),
        "2023-12-01",
        "2024-01-31" + E,
    ),
]


@pytest.mark.parametrize(
    ("text", "now", "start", "end"), LAST_PAIRS_ASKED, ids=[c[0] for c in LAST_PAIRS_ASKED]
)
def test_names_after_last_are_read_from_the_asking_day(
    text: str, now: datetime, start: str, end: str
) -> None:
    assert window(text, now) == (at(start), at(end))


def test_a_range_end_read_a_year_on_past_the_calendar_is_not_an_error() -> None:
    late = extract_time_window("from now until Christmas", datetime(9999, 6, 1, tzinfo=UTC))
    assert late is None or isinstance(late, TimeWindow)

"""Weekdays and weekends counted back from now ("two Fridays ago", "three weekends ago",
"the last two weekends"): pure, no database.

The same fixed ``NOW`` and conventions as ``test_temporal.py``: Wednesday 2024-06-12,
15:30 UTC; ends inclusive (``E``).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hindsight_tools.query.time_window import extract_time_window
from tests.test_temporal import E, assert_exact_window, at, window

WEEKLY = [
    # the latest such day before today is one ago, as "last Friday" is
    ("What did I do two Fridays ago?", "2024-05-31", "2024-05-31" + E),
    ("one Wednesday ago", "2024-06-05", "2024-06-05" + E),
    ("a couple of Mondays ago", "2024-06-03", "2024-06-03" + E),
    ("a few Sundays ago", "2024-05-26", "2024-05-26" + E),
    # a weekend N ago is that of the week N weeks ago, as "last weekend" is last week's
    ("a weekend ago", "2024-06-08", "2024-06-09" + E),
    ("What did we do two weekends ago?", "2024-06-01", "2024-06-02" + E),
    ("3 weekends back", "2024-05-25", "2024-05-26" + E),
    # "several" spans its range
    ("several weekends ago", "2024-05-18", "2024-06-02" + E),
    ("several Mondays ago", "2024-05-20", "2024-06-03" + E),
    ("the last several weekends", "2024-05-18", "2024-06-09" + E),
    # the last N weekends are all of them
    ("What did I do over the last two weekends?", "2024-06-01", "2024-06-09" + E),
    ("the past couple of weekends", "2024-06-01", "2024-06-09" + E),
    ("the last two weekends in a row", "2024-06-01", "2024-06-09" + E),
    # the last N of a weekday are all of them
    ("What did I cook the past three Fridays?", "2024-05-24", "2024-06-07" + E),
    ("the last few Mondays", "2024-05-27", "2024-06-10" + E),
    # an expression like any other: it opens windows
    ("since two Fridays ago", "2024-05-31", None),
    # weekends of a named period, or "back" in an idiom, are no weekends back from now
    ("what did we do the last two weekends of June 2023?", "2023-06-01", "2023-06-30" + E),
    ("the last two weekends in June", "2024-06-01", "2024-06-30" + E),
    ("two weekends back in March we went hiking", "2024-03-01", "2024-03-31" + E),
]


@pytest.mark.parametrize(("text", "start", "end"), WEEKLY, ids=[c[0] for c in WEEKLY])
def test_weekdays_and_weekends_counted_back(text: str, start: str | None, end: str | None) -> None:
    assert_exact_window(text, start, end)


def test_last_weekend_and_weeks_ago_are_unchanged() -> None:
    assert_exact_window("What did I do last weekend?", "2024-06-08", "2024-06-09" + E)
    assert_exact_window("2 weeks ago", "2024-05-27", "2024-06-02" + E)


@pytest.mark.parametrize(
    "text",
    [
        "I spent a weekend back home with my parents",
        "I worked two weekends back to back",
        "three Saturdays back-to-back",
        "the last two weekends before the move",
        "the last two weekends of the season",
        "the last two Fridays of May",
        "0 Fridays ago",
        "the last 0 weekends",
    ],
)
def test_no_weekend_or_weekday_back_from_now(text: str) -> None:
    assert window(text) is None


def test_weekends_are_counted_by_calendar_week_on_a_weekend_too() -> None:
    saturday = datetime(2024, 6, 15, 10, tzinfo=UTC)
    # last weekend is last week's, June 8-9, not the one in progress
    assert window("two weekends ago", saturday) == (at("2024-06-01"), at("2024-06-02" + E))
    assert window("the last two weekends", saturday) == (at("2024-06-01"), at("2024-06-09" + E))
    # the latest Saturday before today is one Saturday ago
    assert window("two Saturdays ago", saturday) == (at("2024-06-01"), at("2024-06-01" + E))


@pytest.mark.parametrize("now", ["0001-01-01T00:30:00+01:00", "9999-12-31T22:00:00-05:00"])
def test_a_time_whose_utc_is_past_the_calendar_reads_no_window(now: str) -> None:
    assert extract_time_window("two Fridays ago", datetime.fromisoformat(now)) is None

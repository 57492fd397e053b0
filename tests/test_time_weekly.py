"""Weekdays and weekends counted back from now ("two Fridays ago", "three weekends ago",
"the last two weekends"): pure, no database.

The same fixed ``NOW`` and conventions as ``test_temporal.py``: Wednesday 2024-06-12,
15:30 UTC; ends inclusive (``E``).
"""

from __future__ import annotations

import pytest

from tests.test_temporal import E, assert_exact_window

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
    # a fuzzy count spans its range
    ("several weekends ago", "2024-05-18", "2024-06-02" + E),
    # the last N weekends are all of them
    ("What did I do over the last two weekends?", "2024-06-01", "2024-06-09" + E),
    ("the past couple of weekends", "2024-06-01", "2024-06-09" + E),
    # an expression like any other: it opens windows
    ("since two Fridays ago", "2024-05-31", None),
]


@pytest.mark.parametrize(("text", "start", "end"), WEEKLY, ids=[c[0] for c in WEEKLY])
def test_weekdays_and_weekends_counted_back(text: str, start: str | None, end: str | None) -> None:
    assert_exact_window(text, start, end)


def test_last_weekend_and_weeks_ago_are_unchanged() -> None:
    assert_exact_window("What did I do last weekend?", "2024-06-08", "2024-06-09" + E)
    assert_exact_window("2 weeks ago", "2024-05-27", "2024-06-02" + E)

"""The first or last days, weeks or months of a period ("the first two weeks of March",
"the last three days of May"), a part of the unit holding now ("the beginning of the
month") and a bare day joined to a date ("May 3rd and 4th"): pure, no database.

The same fixed ``NOW`` and conventions as ``test_temporal.py``: Wednesday 2024-06-12,
15:30 UTC; ends inclusive (``E``).
"""

from __future__ import annotations

import pytest

from tests.test_temporal import E, assert_exact_window, window

PARTS = [
    ("What did I do in the first two weeks of March?", "2024-03-01", "2024-03-14" + E),
    ("What happened in the first few days of June?", "2024-06-01", "2024-06-03" + E),
    ("the first couple of days of June", "2024-06-01", "2024-06-02" + E),
    ("What did I do in the last three days of May?", "2024-05-29", "2024-05-31" + E),
    ("in the first 10 days of April 2024", "2024-04-01", "2024-04-10" + E),
    ("the last two weeks of February 2024", "2024-02-16", "2024-02-29" + E),
    ("during the last two months of 2023", "2023-11-01", "2023-12-31" + E),
    ("the first 3 months of the year", "2024-01-01", "2024-03-31" + E),
    ("the last seven days of summer 2023", "2023-08-25", "2023-08-31" + E),
    # the part opens and closes windows like any expression
    ("since the first two weeks of March", "2024-03-01", None),
    # the unit holding now, as "this month" is
    ("What happened at the beginning of the month?", "2024-06-01", "2024-06-10" + E),
    ("at the start of the year", "2024-01-01", "2024-04-30" + E),
    ("the end of the month", "2024-06-21", "2024-06-30" + E),
    # a bare day joined to a date is of its month
    ("What did I do on May 3rd and 4th?", "2024-05-03", "2024-05-04" + E),
    ("What did we do on the 3rd and 4th of May?", "2024-05-03", "2024-05-04" + E),
    ("June 5 or 6?", "2024-06-05", "2024-06-06" + E),
    # not a count or a clock time after it, not a day after the date's
    ("I met her on May 3 and 4 days later", "2024-05-03", "2024-05-03" + E),
    ("on May 3 and 5 pm", "2024-05-03", "2024-05-03" + E),
    ("the 5th and 4th of May", "2024-05-04", "2024-05-04" + E),
    # a year after "the year" is that year's
    ("at the end of the year 2023?", "2023-01-01", "2023-12-31" + E),
    ("the beginning of the year '22", "2022-01-01", "2022-12-31" + E),
]


@pytest.mark.parametrize(("text", "start", "end"), PARTS, ids=[c[0] for c in PARTS])
def test_the_edge_units_of_a_period(text: str, start: str | None, end: str | None) -> None:
    assert_exact_window(text, start, end)


@pytest.mark.parametrize(
    "text",
    [
        "the first several days of June",  # no one count
        "the first 40 days of June",  # more than June holds
        "the first two weeks of the project",  # no period
    ],
)
def test_no_edge_units_without_one_span_that_holds_them(text: str) -> None:
    assert window(text) is None


def test_months_of_a_day_leave_the_day() -> None:
    assert_exact_window("the last two months of June 5", "2024-06-05", "2024-06-05" + E)

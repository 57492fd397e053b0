"""Weekdays and weekends counted back from now: "two Fridays ago", "three weekends ago",
"the last two weekends", "the past three Fridays" (the conventions are
:mod:`hindsight_tools.query.time_window`'s).

Counted as "last Friday" and "last weekend" are: "one Friday ago" is the latest Friday
before today, "two Fridays ago" the one a week before it; "one weekend ago" is the weekend
of last week (as "one week ago" is last week), "two weekends ago" that of the week before.
"The last two weekends" ("Fridays") are both, and the days between them: a window is one
span.
"Several" spans its range ("several Fridays ago" is the Friday two to four weeks back); a
count below one is no time.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from hindsight_tools.query.spans import Span, day_span, week_span

__all__ = [
    "AGO",
    "NOT_OF_A_PERIOD",
    "weekday_after",
    "weekday_before",
    "weekdays_ago",
    "weekends_back",
]

# "ago", or "back" that isn't "back home", "back to back", "back in March", …
AGO = r"(?:ago|back(?![ -](?:to[ -]back|home|in|at|on|then|there|from|when)\b))\b"
# "the last two weekends of May", "… before the move" are not counted back from now
NOT_OF_A_PERIOD = r"(?!,? (?:of|during|before|after|prior to)\b|,? in\b(?! a row\b))"


def weekday_before(today: date, weekday: int) -> date:
    """The latest ``weekday`` (0 Monday) strictly before ``today``: "last Friday"."""
    return today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1)


def weekday_after(today: date, weekday: int) -> date:
    """The first ``weekday`` (0 Monday) strictly after ``today``: "next Friday"."""
    return today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)


def weekdays_ago(weekday: int, fewest: int, most: int, now: datetime) -> Span:
    """The ``weekday`` (0 Monday) ``fewest`` to ``most`` occurrences before today."""
    _counts(fewest, most)
    latest = weekday_before(now.date(), weekday)
    return Span(
        day_span(latest - timedelta(weeks=most - 1)).start,
        day_span(latest - timedelta(weeks=fewest - 1)).end,
    )


def weekends_back(fewest: int, most: int, now: datetime) -> Span:
    """From the weekend of the calendar week ``most`` weeks before now's to that of the week
    ``fewest`` weeks before it."""
    _counts(fewest, most)
    return Span(_saturday(now.date(), most).start, _saturday(now.date(), fewest).end)


def _saturday(today: date, weeks: int) -> Span:
    saturday = week_span(today - timedelta(weeks=weeks)).start + timedelta(days=5)
    return day_span(saturday.date(), 2)


def _counts(fewest: int, most: int) -> None:
    if not 1 <= fewest <= most:  # "0 Fridays ago" would be ahead of today
        raise ValueError(f"counts {fewest} to {most} are no time back")

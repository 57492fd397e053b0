"""The holidays the time parser knows, as spans of a given year (the other conventions are
:mod:`hindsight_tools.query.time_window`'s): Christmas 24-26 December, Christmas Eve and
Day, Boxing Day, New Year 31 December - 1 January, New Year's Eve and Day, Valentine's Day,
Halloween, Easter Good Friday - Easter Monday (Western, ``dateutil.easter``),
Thanksgiving, the US one: the fourth Thursday of November and its weekend, and "the
holidays" ("the holiday season"), 24 December - 1 January.

Named alone they need a time word before them ("over/at/during/around/on Christmas"; "for
Christmas", "Christmas presents" and "in the new year" are no time) and are ``vague``:
"What does Tim watch during Thanksgiving?" asks about a habit as often as a date. With a
year or last/this/next ("Christmas 2022", "last Easter") they are one holiday like any
other name."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta

from dateutil.easter import easter

from hindsight_tools.query.spans import FLAGS, Span, by_modifier, day_span, latest_started

__all__ = ["HOLIDAY", "HOLIDAYS", "HOLIDAY_NAME", "holiday", "own_day"]


def _thanksgiving(year: int) -> Span:
    first = date(year, 11, 1)
    thursday = first + timedelta(days=(3 - first.weekday()) % 7 + 21)
    return day_span(thursday, 4)  # the Thursday and its long weekend


# A holiday's span in a given year, keyed by its normalised name (lower case, no
# apostrophes, single spaces).
HOLIDAYS: dict[str, Callable[[int], Span]] = {
    "christmas eve": lambda y: day_span(date(y, 12, 24)),
    "christmas day": lambda y: day_span(date(y, 12, 25)),
    "boxing day": lambda y: day_span(date(y, 12, 26)),
    "christmas": lambda y: day_span(date(y, 12, 24), 3),
    "new years eve": lambda y: day_span(date(y, 12, 31)),
    "new years day": lambda y: day_span(date(y, 1, 1)),
    # "New Year 2024" is the night it began: 31 December 2023 and 1 January 2024
    "new years": lambda y: day_span(date(y - 1, 12, 31), 2),
    "valentines day": lambda y: day_span(date(y, 2, 14)),
    "halloween": lambda y: day_span(date(y, 10, 31)),
    "easter": lambda y: day_span(easter(y) - timedelta(days=2), 4),  # Good Friday to Monday
    "thanksgiving": _thanksgiving,
    # "over the holidays", "the holiday season": Christmas Eve to New Year's Day
    "holidays": lambda y: day_span(date(y, 12, 24), 9),
}
# A holiday's name, without a group, for patterns that name it more than once
HOLIDAY_NAME = (
    r"(?:christmas(?: eve| day)?|boxing day|new year'?s?(?: eve| day)?"
    # "the holidays" with its "the": "my last holidays", "on holidays" are a vacation
    r"|valentine'?s day|halloween|easter|thanksgiving|the holidays|(?:holiday|festive) season)\b"
)
HOLIDAY = rf"(?P<hol>{HOLIDAY_NAME})"


# The holiday's own day within its span, in days from the span's start: what a period
# counted from it is counted from ("the day after Christmas" is Boxing Day, "the weekend
# after Thanksgiving" the one that Thursday begins).
_OWN_DAY = {"christmas": 1, "easter": 2, "new years": 1, "thanksgiving": 0}
_NAMED = re.compile(rf"(?:(?:last|this|next|the) )?{HOLIDAY}", FLAGS)


def own_day(text: str, span: Span) -> Span | None:
    """The holiday's own day when ``text`` is a holiday of several days and ``span`` its
    days, else None ("the day after Christmas" names a day, not a holiday)."""
    m = _NAMED.match(text)
    offset = _OWN_DAY.get(_holiday_name(m)) if m else None
    return None if offset is None else day_span(span.start.date() + timedelta(days=offset))


def _holiday_name(m: re.Match[str]) -> str:
    name = " ".join(m["hol"].lower().replace("'", "").split())
    name = re.sub(r"^(?:the holidays|(?:holiday|festive) season)$", "holidays", name)
    return re.sub(r"^new years?\b", "new years", name)  # "New Year", "New Year's": one key


def holiday(m: re.Match[str], now: datetime) -> Span:
    make = HOLIDAYS[_holiday_name(m)]
    groups = m.groupdict()
    if groups.get("year"):
        return make(int(groups["year"]))
    mod = groups.get("mod")
    return by_modifier(mod, make, now.year, now) if mod else latest_started(make, now.year, now)

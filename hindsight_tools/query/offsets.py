"""Periods counted from another: "the week after Christmas", "the day before Easter 2023",
"two days after June 5", "the three weeks before May 1" (the conventions are
:mod:`hindsight_tools.query.time_window`'s). :func:`hindsight_tools.query.expressions.parse_at`
reads them as it reads any expression, so they open and join windows too ("since the day
after Christmas", "between the day after Christmas and New Year's Eve").

In calendar units, as "last week" and "two weeks ago" are from now: "the week before
August 3, 2023" (a Thursday) is the Monday-Sunday week before that day's, July 24-30, the
week "last week" meant when said that day. A question's period is often one a memory
told after it names the same way ("Last week we went to the memorial", said on August 3),
and the two then agree. Read as "before X" alone, it would be everything up to X.

* "the U after X" (U a day, week, month or year): the calendar unit after the one X ends
  in; "the N Us after X" the N units after it.
* "N Us after X", "a U after X": the Nth unit after it, one unit long ("two days after
  June 5" is June 7, "two weeks after" a Wednesday the Monday-Sunday week two weeks on);
  "up to / within N Us after X" all N units.
* "before" the same, back from the unit X starts in; "following" is "after", "prior to"
  "before". "The last U before X" is "the U before X", and so is "last U before X" when X
  names its year ("last weekend before April 10, 2023" is April 8-9, not the weekend
  before now); "last week before Friday", "last year after Easter" are the asker's last
  week and last year.
* "the weekend after X" is the first Saturday and Sunday after X ends, "two weekends after
  X" the second, "the two weekends after X" both; "before", back from X's start. A
  weekday the same: "the Sunday before October 25, 2022" is October 23, "two Fridays
  after June 5" the second Friday after it, "the two Fridays after" both.
* A holiday of several days is counted from its own day: "the day after Christmas" is
  Boxing Day, "the week before Christmas" the week before the one Christmas Day is in.
* "the day after tomorrow", "the day before yesterday" are the rules' own, with their part
  of the day ("the day after tomorrow morning"); "a week after today", "two days after
  tomorrow" are counted like any other.
* Nested at most :data:`hindsight_tools.query.expressions.MAX_NESTED` deep ("two days
  before the day after Christmas" is two).
* "the days after X", without a count, and "several days after X" have no one span and
  are left to "after X"; "a couple of", "a few" days are 2 and 3, as before "ago".
"""

from __future__ import annotations

import re
from datetime import timedelta

from hindsight_tools.query.counts import COUNT, NUMBER_WORD, count_range
from hindsight_tools.query.holidays import own_day
from hindsight_tools.query.spans import (
    FLAGS,
    HAS_YEAR,
    Span,
    day_span,
    midnight,
    shift,
    unit_span,
)
from hindsight_tools.query.time_rules import MONTH_ANY, WEEKDAY, WEEKDAY_STEM, WEEKDAYS
from hindsight_tools.query.weekly import weekday_after, weekday_before

__all__ = ["OFFSET", "counted", "ends_a_count_range"]

# The words before X; X itself is read by whoever matched this. A preposition is part of
# it so that "over the weekend after Thanksgiving" starts where the rule for "over the
# weekend" does, and wins by its length.
OFFSET = re.compile(
    r"(?:\b(?:over|on|at|during|through|in) )?"
    r"(?!the day after tomorrow\b|the day before yesterday\b)"
    rf"\b(?:(?P<the>the (?:last |first |next )?|last )(?P<many>{COUNT} )?"
    rf"|(?P<upto>up to |within )?(?P<count>{COUNT}) "
    # a weekday needs no "the": "on Sunday before October 25, 2022"
    rf"|(?=(?:{WEEKDAY_STEM}) (?:after|following|before|prior to) ))"
    rf"(?P<unit>day|week|weekend|month|year|{WEEKDAY_STEM})(?P<plural>s)? "
    r"(?P<dir>after|following|before|prior to) ",
    FLAGS,
)
# A count that ends a range of counts ("one or two days after", "2-3 days", "two/three
# days") names no one span; a day of a date is no count ("from June 1 to two days after")
_SMALL_COUNT = (
    r"(?:(?<![-/.,:\w])\d{1,2}|(?:a )?couple(?: of)?|(?:a )?few|several|"
    + "|".join(sorted(NUMBER_WORD, key=len, reverse=True))
    + ")"
)
_COUNT_RANGE_BEFORE = re.compile(
    rf"(?:\b(?P<month>{MONTH_ANY}) )?\b{_SMALL_COUNT}\b ?(?:or|to|-|/) ?$", FLAGS
)


def ends_a_count_range(before: str) -> bool:
    """Whether ``before``, the text before a count, ends with a small count and "or", "to",
    "-" or "/" (not a year, a date's day or "Plan A")."""
    m = _COUNT_RANGE_BEFORE.search(before)
    return m is not None and not m["month"]


# A holiday's name followed by one of these is a part of it, counted from as read
# ("Thanksgiving weekend"); by a weekday, that day of it ("Easter Monday")
_PART_OF_HOLIDAY = re.compile(
    rf" (?:(?P<day>{WEEKDAY})|weekend|week|break|holidays?|vacation)\b", FLAGS
)


def counted(m: re.Match[str], x: Span, x_text: str, after_x: str = "") -> Span | None:
    """The period ``m`` (an :data:`OFFSET` match) counts from ``x``, the span of the words
    ``x_text`` after it (``after_x`` what follows them); None when the words name no one
    span."""
    words = m["many"] or m["count"]
    low, high = count_range(words) if words else (1, 1)
    if low != high or (m["plural"] and not words):
        return None
    after = m["dir"].lower() in ("after", "following")
    if m["the"] and m["the"].lower() == "last " and (after or not HAS_YEAR.search(x_text)):
        return None  # "last year after Easter", "last week before Friday": the asker's unit
    holiday = own_day(x_text, x)
    part = _PART_OF_HOLIDAY.match(after_x) if holiday else None
    if holiday and part is None:
        x = holiday
    elif holiday and part and part["day"]:
        x = _weekday_in(x, WEEKDAYS.index(part["day"].lower())) or holiday
    first, last = (1, low) if m["the"] or m["upto"] else (low, low)
    near, far = (first, last) if after else (-last, -first)
    unit = m["unit"].lower()
    try:
        if unit == "weekend":
            return Span(_weekend(x, near).start, _weekend(x, far).end)
        if unit in WEEKDAYS:
            day = WEEKDAYS.index(unit)
            return Span(_weekday(x, day, near).start, _weekday(x, day, far).end)
        edge = x.end if after else x.start
        return Span(
            unit_span(unit, shift(edge, unit, near)).start,
            unit_span(unit, shift(edge, unit, far)).end,
        )
    except (ValueError, OverflowError):  # past datetime's years
        return None


def _weekend(x: Span, nth: int) -> Span:
    """The ``nth`` weekend after ``x`` ends (1 the first), or before it starts (-1 the last)."""
    if nth > 0:
        return day_span(_weekday(x, 5, nth).start.date(), 2)
    return day_span(_weekday(x, 6, nth).start.date() - timedelta(days=1), 2)


def _weekday(x: Span, weekday: int, nth: int) -> Span:
    """The ``nth`` day that is ``weekday`` (0 Monday) after ``x`` ends (1 the first), or
    before it starts (-1 the last)."""
    if nth > 0:
        return day_span(weekday_after(x.end.date(), weekday) + timedelta(weeks=nth - 1))
    return day_span(weekday_before(x.start.date(), weekday) - timedelta(weeks=-nth - 1))


def _weekday_in(x: Span, weekday: int) -> Span | None:
    """The day of ``x`` that is ``weekday`` (0 Monday), if one is."""
    first = x.start.date()
    day = first + timedelta(days=(weekday - first.weekday()) % 7)
    return day_span(day) if midnight(day) <= x.end else None

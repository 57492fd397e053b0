"""Periods measured from another: "the week after Christmas", "the day before Easter 2023",
"two days after June 5", "the three weeks before May 1" (the conventions are
:mod:`hindsight_tools.query.time_window`'s).

In calendar units, as "last week" and "two weeks ago" are from now: "the week before
August 3, 2023" (a Thursday) is the Monday-Sunday week before that day's, July 24-30, the
week "last week" meant when said that day. A question's period is often one a memory
told after it names the same way ("Last week we went to the memorial", said on August 3),
and the two then agree. Read as "before X" alone, it would be everything up to X.

* "the U after X" (U a day, week, month or year): the calendar unit after the one X ends
  in; "the N Us after X" the N units after it.
* "N Us after X", "a U after X": the Nth unit after it, one unit long ("two days after
  June 5" is June 7, "two weeks after" a Wednesday the Monday-Sunday week two weeks on).
* "before" the same, back from the unit X starts in; "following" is "after", "prior to"
  "before".
* "the weekend after X" is the first Saturday and Sunday after X ends, "two weekends after
  X" the second; "before", back from X's start.
* "the days after X", without a count, and "several days after X" have no one span and
  are left to "after X".
"""

from __future__ import annotations

import itertools
import re
from datetime import datetime, timedelta

from hindsight_tools.query.expressions import MAX_TRIES_PER_RULE, Found, open_window, parse_at
from hindsight_tools.query.spans import FLAGS, TICK, Span, day_span, shift, unit_span
from hindsight_tools.query.time_rules import COUNT, count_range
from hindsight_tools.query.window import TimeWindow

__all__ = ["measured_from"]

_OFFSET = re.compile(
    rf"\b(?:(?P<the>the )(?P<many>{COUNT} )?|(?P<count>{COUNT}) )"
    r"(?P<unit>day|week|weekend|month|year)(?P<plural>s)? "
    r"(?P<dir>after|following|before|prior to) ",
    FLAGS,
)


# "since the day after Christmas": the period opens a window as any expression would
_OPENED_BY = re.compile(r"\b(?P<kw>(?:ever )?since|until|till|before|after|prior to) $", FLAGS)


def measured_from(text: str, now: datetime) -> Found | None:
    """The first "the week after X"-like period in ``text`` whose X is a time."""
    for m in itertools.islice(_OFFSET.finditer(text), MAX_TRIES_PER_RULE):
        x = parse_at(text, m.end(), now)
        span = _offset(m, x[0]) if x is not None else None
        if x is None or span is None:
            continue
        opened = _OPENED_BY.search(text, max(0, m.start() - 12), m.start())
        if opened is None:
            return m.start(), x[1] - m.start(), TimeWindow(*span)
        word = "before" if opened["kw"].lower() == "prior to" else opened["kw"].split()[-1]
        window = open_window(word.lower(), *span)
        if window is not None:
            return opened.start(), x[1] - opened.start(), window
    return None


def _offset(m: re.Match[str], x: Span) -> Span | None:
    after = m["dir"].lower() in ("after", "following")
    unit = m["unit"].lower()
    words = m["many"] or m["count"]
    low, high = count_range(words) if words else (1, 1)
    if low != high or (m["plural"] and not words):
        return None
    try:
        if unit == "weekend":
            return _weekend(x, low if m["count"] else 1, after)
        first, last = (1, low) if m["the"] else (low, low)
        if after:
            near, far = first, last
        else:
            near, far = -last, -first
        edge = x.end if after else x.start
        return Span(
            unit_span(unit, shift(edge, unit, near)).start,
            unit_span(unit, shift(edge, unit, far)).end,
        )
    except (ValueError, OverflowError):  # past datetime's years
        return None


def _weekend(x: Span, nth: int, after: bool) -> Span:
    if after:
        saturday = (x.end + TICK).date()
        saturday += timedelta(days=(5 - saturday.weekday()) % 7 + 7 * (nth - 1))
    else:
        day_before = (x.start - TICK).date()
        sunday = day_before - timedelta(days=(day_before.weekday() - 6) % 7 + 7 * (nth - 1))
        saturday = sunday - timedelta(days=1)
    return day_span(saturday, 2)

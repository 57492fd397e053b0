"""Calendar spans and arithmetic for :mod:`hindsight_tools.query.time_rules`.

Every span is closed and aware UTC: ``end`` is the span's last microsecond. Choosing among
the yearly (weekly, …) occurrences of a name ("last May", "this summer") lives here too.
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple

TICK = timedelta(microseconds=1)
FLAGS = re.IGNORECASE | re.ASCII  # ASCII: a Unicode digit must not become a day number
HAS_YEAR = re.compile(r"\d{4}")  # words that name their year ("April 10, 2023")
# Where a sentence ends: "?", "!", ";", a line's end, or a dot before a space that is not
# a date's ("Jun. 9") nor an abbreviation's ("Dr. Lee", "e.g.", "a.m.").
SENTENCE_END = re.compile(
    r"[?!;\n]|(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bSt)(?<!\bvs)(?<!\bMrs)(?<!\bg)(?<!\be)(?<!\bm)"
    r"\.(?!\s*\d)(?=\s|$)"
)


class Span(NamedTuple):
    start: datetime
    end: datetime


# --- calendar arithmetic -------------------------------------------------------------


def midnight(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


def upto(start: datetime, next_start: datetime) -> Span:
    return Span(start, next_start - TICK)


def day_span(d: date, days: int = 1) -> Span:
    return upto(midnight(d), midnight(d + timedelta(days=days)))


def week_span(d: date) -> Span:
    return day_span(d - timedelta(days=d.weekday()), 7)


def month_start(year: int, month: int) -> datetime:
    # month may run past 1..12 so callers can step across year boundaries freely
    y, m0 = divmod(year * 12 + month - 1, 12)
    return datetime(y, m0 + 1, 1, tzinfo=UTC)


def month_span(year: int, month: int, count: int = 1) -> Span:
    return upto(month_start(year, month), month_start(year, month + count))


def year_span(year: int, count: int = 1) -> Span:
    return month_span(year, 1, 12 * count)


def quarter_span(year: int, quarter: int) -> Span:
    return month_span(year, 3 * quarter - 2, 3)


SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def season_span(season: str, year: int) -> Span:
    # winter YEAR starts in December of YEAR and runs into February of YEAR + 1
    return month_span(year, SEASON_START[season.lower()], 3)


def add_months(moment: datetime, months: int) -> datetime:
    y, m0 = divmod(moment.year * 12 + moment.month - 1 + months, 12)
    day = min(moment.day, calendar.monthrange(y, m0 + 1)[1])
    return moment.replace(year=y, month=m0 + 1, day=day)


def shift(moment: datetime, unit: str, n: int) -> datetime:
    if unit == "hour":
        return moment + timedelta(hours=n)
    if unit == "day":
        return moment + timedelta(days=n)
    if unit == "week":
        return moment + timedelta(weeks=n)
    return add_months(moment, n if unit == "month" else 12 * n)


def unit_span(unit: str, moment: datetime) -> Span:
    """The calendar hour, day, Monday-Sunday week, month or year holding ``moment``."""
    if unit == "hour":
        top = moment.replace(minute=0, second=0, microsecond=0)
        return upto(top, top + timedelta(hours=1))
    if unit == "day":
        return day_span(moment.date())
    if unit == "week":
        return week_span(moment.date())
    if unit == "month":
        return month_span(moment.year, moment.month)
    return year_span(moment.year)


# --- choosing among the yearly (or weekly, …) occurrences of a name ------------------

Maker = Callable[[int], Span]


def _occurrences(make: Maker, around: int) -> list[Span]:
    spans = []
    for k in range(around - 2, around + 3):
        try:
            spans.append(make(k))
        except (ValueError, OverflowError):  # near year 1 or 9999
            continue
    return spans


def latest_started(make: Maker, around: int, now: datetime) -> Span:
    return max((s for s in _occurrences(make, around) if s.start <= now), key=lambda s: s.start)


def latest_ended(make: Maker, around: int, now: datetime) -> Span:
    return max((s for s in _occurrences(make, around) if s.end < now), key=lambda s: s.start)


def next_after(make: Maker, around: int, now: datetime) -> Span:
    return min((s for s in _occurrences(make, around) if s.start > now), key=lambda s: s.start)


def nearest(make: Maker, around: int, now: datetime) -> Span:
    def distance(s: Span) -> tuple[timedelta, bool]:
        gap = max(s.start - now, now - s.end, timedelta(0))
        return gap, s.start > now  # on a tie the past one wins

    return min(_occurrences(make, around), key=distance)


# "last X" = the latest X that has fully ended; "this X" = the X holding now, else the
# nearest; "next X" = the first X that starts after now.
_MODIFIERS: dict[str, Callable[[Maker, int, datetime], Span]] = {
    "last": latest_ended,
    "this": nearest,
    "next": next_after,
}


def modifier(word: str) -> str:
    word = " ".join(word.lower().split())
    return "last" if word in ("past", "this past", "previous") else word


def by_modifier(word: str, make: Maker, around: int, now: datetime) -> Span:
    return _MODIFIERS[modifier(word)](make, around, now)


# The weeks of a period of whole months by their first day: a month's fourth week is its
# days 22-28, its last week its last seven days; a year's first week is 1-7 January.
_WEEK_OF_PERIOD = {"first week": 0, "second week": 7, "third week": 14, "fourth week": 21}


# A Monday-Sunday week's parts, in days from its Monday: "early in the week" to Wednesday,
# "midweek" Tuesday to Thursday, "the end of the week" from Thursday; overlapping, as the
# words are, so that a day between two parts is in both
_WEEK_PARTS = {
    "early": (0, 3),
    "mid": (1, 4),
    "late": (3, 7),
    "first half": (0, 3),
    "second half": (3, 7),
}


def split_part(span: Span, part: str) -> Span | None:
    """The early/mid/late third or first/second half of a span of whole months or years:
    a year splits Jan-Apr / May-Aug / Sep-Dec, a month 1-10 / 11-20 / 21-end, a decade
    0-3 / 4-6 / 7-9; of a Monday-Sunday week, :data:`_WEEK_PARTS`; the first to fourth and
    the last week of a month, season, quarter or year (its days 1-7, …, 22-28, its last
    seven); the Monday-Sunday week of a day ("week of"). Other spans have no such part
    ("late yesterday"): None."""
    start, stop = span.start, span.end + TICK
    if part in ("week of", "weekend of"):
        if stop - start != timedelta(days=1):
            return None
        week = week_span(start.date())
        return week if part == "week of" else Span(week.start + timedelta(days=5), week.end)
    if stop - start == timedelta(days=7) and start == week_span(start.date()).start:
        of_week = _WEEK_PARTS.get(part)
        if of_week is None:
            return None
        return day_span(start.date() + timedelta(days=of_week[0]), of_week[1] - of_week[0])
    months = (stop.year - start.year) * 12 + stop.month - start.month
    aligned = start == month_start(start.year, start.month) and stop == month_start(
        stop.year, stop.month
    )
    if not aligned or months < 1:
        return None
    if part.endswith("week"):
        first_day = _WEEK_OF_PERIOD.get(part, (stop - start).days - 7)
        return day_span(start.date() + timedelta(days=first_day), 7)
    if months == 1:
        days = (stop - start).days
        bounds = {"early": (0, 10), "mid": (10, 20), "late": (20, days), "first half": (0, 15)}
        first, last = bounds.get(part, (15, days))
        return upto(start + timedelta(days=first), start + timedelta(days=last))
    years = months % 12 == 0 and months >= 24
    n = months // 12 if years else months
    bounds = {
        "early": (0, math.ceil(n / 3)),
        "mid": (math.ceil(n / 3), n - n // 3),
        "late": (n - n // 3, n),
        "first half": (0, math.ceil(n / 2)),
        "second half": (n // 2, n),
    }
    first, last = bounds[part]
    scale = 12 if years else 1
    return upto(
        month_start(start.year, start.month + first * scale),
        month_start(start.year, start.month + last * scale),
    )

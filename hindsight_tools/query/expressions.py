"""Sub-expressions of a query's time words: the longest expression the rules read at a
position ("since X", "between X and Y", "early X" read their X here), and the parts of a
period ("early", "the first week of"). Shared by the finders of
:mod:`hindsight_tools.query.time_window`, whose docstring states the conventions."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta

from hindsight_tools.query.counts import COUNT, count_range
from hindsight_tools.query.holidays import HOLIDAY_NAME
from hindsight_tools.query.offsets import OFFSET, counted, ends_a_count_range
from hindsight_tools.query.spans import (
    FLAGS,
    SENTENCE_END,
    TICK,
    Span,
    day_span,
    midnight,
    month_start,
    shift,
    split_part,
    unit_span,
    upto,
)
from hindsight_tools.query.tense import asks_of_the_past
from hindsight_tools.query.time_rules import (
    MONTH_ANY,
    RULES,
    SEASON,
    WEEKDAY_STEM,
    WEEKDAYS,
    YEAR,
    Handler,
)
from hindsight_tools.query.window import TimeWindow

__all__ = [
    "MAX_NESTED",
    "MAX_TRIES_PER_RULE",
    "PART",
    "Finder",
    "Found",
    "attempt",
    "open_window",
    "parse_at",
    "part_at",
]

# A query with more look-alike dates than this is noise; bounds the dateparser calls.
MAX_TRIES_PER_RULE = 16

# Where an expression starts and how long it is, with its window: the leftmost, then the
# longest, wins among the finders.
Found = tuple[int, int, TimeWindow]
Finder = Callable[[str, datetime], Found | None]


def attempt(handle: Handler, m: re.Match[str], now: datetime) -> Span | None:
    try:
        return handle(m, now)
    except (ValueError, OverflowError):  # a date outside datetime's years 1..9999
        return None


# --- sub-expressions: X in "since X", "between X and Y", "early X" -------------------


def parse_at(
    text: str,
    pos: int,
    now: datetime,
    endpos: int | None = None,
    *,
    parts: bool = True,
    nested: int = 0,
) -> tuple[Span, int] | None:
    """The longest expression starting at ``pos`` (and ending at ``endpos`` if given);
    ``nested`` counts the counted periods it is inside."""
    best: tuple[Span, int] | None = None
    for r in RULES:
        m = r.loose.match(text, pos) if endpos is None else r.loose.fullmatch(text, pos, endpos)
        span = attempt(r.handle, m, now) if m else None
        if m and span and (best is None or m.end() > best[1]):
            best = span, m.end()
    part = part_at(text, pos, now, endpos, nested) if parts else None
    if part and (best is None or part[1] > best[1]):
        best = part
    offset = _counted_at(text, pos, now, endpos, nested) if nested < MAX_NESTED else None
    if offset and (best is None or offset[1] > best[1]):
        best = offset
    return best


# "two days before the day after Christmas" is two deep; a bound keeps a text of nothing
# but "the day after" from costing a recursion per phrase.
MAX_NESTED = 4


def _counted_at(
    text: str, pos: int, now: datetime, endpos: int | None, nested: int
) -> tuple[Span, int] | None:
    """ "the week after X", "two days before X" (:mod:`hindsight_tools.query.offsets`)."""
    m = OFFSET.match(text, pos)
    if m is None or (m["count"] and ends_a_count_range(text[max(0, pos - 24) : pos])):
        return None
    x = parse_at(text, m.end(), now, endpos, nested=nested + 1)
    if x is None:
        return None
    if text.startswith("'s", x[1]) and not _a_day_from_a_day(m, x[0]):
        return None  # "the week before last year's party": the event lies somewhere in X
    span = counted(m, x[0], text[m.end() : x[1]], text[x[1] : x[1] + 12])
    return None if span is None else (span, x[1])


def _a_day_from_a_day(m: re.Match[str], x: Span) -> bool:
    """ "the day after yesterday's party": a day counted from one calendar day."""
    one_day = x.start == midnight(x.start.date()) and x.end + TICK - x.start == timedelta(days=1)
    return m["unit"].lower() == "day" and one_day


PART = re.compile(
    r"\b(?P<part>early|mid|late|(?:at )?(?:the )?(?:beginning|start|middle|end) of"
    r"|(?:the )?(?:first|second) half of"
    r"|(?:(?:in|during) )?(?:the )?(?:first|second|third|fourth|last) week of"
    r"|(?:(?:in|during|on|over) )?the (?:week|weekend) of"
    rf"|(?:(?:in|during|on|over) )?(?:the )?(?P<edge>first|last) (?P<count>{COUNT}) "
    r"(?P<unit>days|weeks|months) of"
    rf"|(?:(?:on|over|during) )?the (?P<nth>first|second|third|fourth|last) "
    rf"(?P<day>{WEEKDAY_STEM}|weekend) of"
    r"|(?:on )?the (?P<date>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th) of)(?: |-)",
    FLAGS,
)
# "the beginning of the month": the unit holding now, as "this month" is, unless the words
# after it name the period: "the end of the month in March 2023", "… after the wedding",
# "… when we visited Paris", "the week-long retreat", or a date with its year later in its
# clause (checked in part_at): "the end of the week, on June 9, 2023", "… at camp in July
# 2022"; not a number ("about $2000", "for 1500 dollars")
_THIS_UNIT = re.compile(
    r"the (?P<unit>week|month|year)\b"
    r"(?!-| (?:that|where|while)\b|'s (?:first|second|third|fourth|last|final|next)\b"
    r"|,? (?:of|in|during|after|before|following|prior|last|this|next|when)\b"
    r"|,? (?:'|\d))",
    FLAGS,
)
_DATED = re.compile(
    rf"\b(?:(?:{MONTH_ANY}|{SEASON}|{HOLIDAY_NAME}|Q[1-4]\b|H[12]\b)[ ,]+"
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)?,? )?(?:of )?|(?:in|of|during) ){YEAR}"
    r"|\b[12]\d{3}-[01]\d\b|\b\d{1,4}[/.-]\d{1,2}[/.-]\d{2,4}\b",
    FLAGS,
)
# "the end of the year 2023": that year
_THE_YEAR = re.compile(r"the year (?=\d{4}\b|'\d\d\b)", FLAGS)
# The first name found in the words wins: "the first week of" before "the week of".
_PART_NAMES = (
    ("first week", "first week"),
    ("second week", "second week"),
    ("third week", "third week"),
    ("fourth week", "fourth week"),
    ("last week", "last week"),
    ("weekend of", "weekend of"),
    ("week of", "week of"),
    ("first half", "first half"),
    ("second half", "second half"),
    ("beginning", "early"),
    ("start", "early"),
    ("middle", "mid"),
    ("end", "late"),
)


def _part_name(words: str) -> str:
    words = words.lower()
    return next((name for key, name in _PART_NAMES if key in words), words)


def part_at(
    text: str, pos: int, now: datetime, endpos: int | None, nested: int = 0
) -> tuple[Span, int] | None:
    m = PART.match(text, pos)
    if m is None:
        return None
    inner = parse_at(text, m.end(), now, endpos, parts=False, nested=nested)
    year = _THE_YEAR.match(text, m.end()) if inner is None else None
    if year is not None:
        inner = parse_at(text, year.end(), now, endpos, parts=False, nested=nested)
    unit = _THIS_UNIT.match(text, m.end()) if inner is None else None
    if unit is not None and _DATED.search(_clause_after(text, unit.end(), endpos)):
        unit = None
    try:
        if unit is not None and (endpos is None or unit.end() == endpos):
            return _of_this_unit(m, unit["unit"].lower(), unit.end(), text, now)
        if inner is None:
            return None
        span = _part_of(m, inner[0])
    except (ValueError, OverflowError):  # "the weekend of" the last days of year 9999
        return None
    return None if span is None else (span, inner[1])


def _part_of(m: re.Match[str], x: Span) -> Span | None:
    """The part of ``x`` that ``PART``'s match ``m`` names; None when ``x`` has none."""
    if m["unit"]:
        return _edge_units(x, m["edge"].lower(), m["count"], m["unit"].lower())
    if m["nth"]:
        return _nth_day(x, _NTH[m["nth"].lower()], m["day"].lower())
    if m["date"]:
        return _day_of_month(x, int(m["date"]))
    return split_part(x, _part_name(m["part"]))


def _of_this_unit(
    m: re.Match[str], unit: str, end: int, text: str, now: datetime
) -> tuple[Span, int] | None:
    """The part of the unit holding now, or of the latest before it that has the part,
    when the part has not begun and a question asks of the past
    (:func:`~hindsight_tools.query.tense.asks_of_the_past`): "What did I do at the end of
    the week?" asked on a Monday is last week's Thursday to Sunday, as a bare name is its
    latest occurrence that has begun. "What am I doing at the end of the week?", a
    statement ("I booked a flight for the end of the month") and a part aimed at ("Did I
    move the meeting to the end of the week?", "Did I buy a dress for the wedding at the
    end of the month?") keep this one."""
    this = unit_span(unit, now)
    try:
        span = _part_of(m, this)
    except ValueError:  # "the 31st of the month" in June
        span = None
    if (
        (span is None or span.start > now)
        and _AIMED_AT.search(text, max(0, m.start() - 40), m.start()) is None
        and asks_of_the_past(text, m.start())
    ):
        span = _latest_before(m, unit, this.start) or span
    return None if span is None else (span, end)


def _latest_before(m: re.Match[str], unit: str, moment: datetime) -> Span | None:
    """The part ``m`` names of the latest of the few units before ``moment``'s that has
    it: "the 31st of the month" asked in March is January's."""
    for _ in range(_UNITS_BACK):
        try:
            moment = shift(moment, unit, -1)
            earlier = _part_of(m, unit_span(unit, moment))
        except (ValueError, OverflowError):  # no unit before the calendar's first
            continue
        if earlier is not None:
            return earlier
    return None


# "for the end of the month", "for the wedding at the end of the month": an event ahead
_AIMED_AT = re.compile(
    r"\b(?:for|to|until|till|into|about)"
    r" (?:(?:the|my|our|his|her|their|a|an) [\w'’-]+ )?$",
    FLAGS,
)
_UNITS_BACK = 3


# "the first Monday of May", "the last weekend of the month": the nth such day of the
# period (a weekend by its Saturday); "the 15th of last month": that day of a month
_NTH = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": -1}


def _nth_day(x: Span, nth: int, day: str) -> Span | None:
    """The ``nth`` (-1 the last) weekday ``day``, or weekend, that ``x`` holds; None when
    it holds fewer."""
    weekday = 5 if day == "weekend" else WEEKDAYS.index(day)
    first, last = x.start.date(), x.end.date()
    if nth > 0:
        found = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (nth - 1))
    else:
        found = last - timedelta(days=(last.weekday() - weekday) % 7)
    if not first <= found <= last:
        return None
    return day_span(found, 2 if day == "weekend" else 1)


def _day_of_month(x: Span, day: int) -> Span | None:
    """Day ``day`` of ``x`` when ``x`` is one calendar month; None otherwise."""
    start = x.start
    if start != month_start(start.year, start.month) or x.end + TICK != month_start(
        start.year, start.month + 1
    ):
        return None
    return day_span(start.date().replace(day=day))  # ValueError past its last day


def _clause_after(text: str, pos: int, endpos: int | None) -> str:
    """The rest of the clause after ``pos``, to the sentence's end or ``endpos``."""
    end = SENTENCE_END.search(text, pos, len(text) if endpos is None else endpos)
    return text[pos : end.start() if end else endpos]


def _edge_units(x: Span, edge: str, words: str, unit: str) -> Span | None:
    """The first or last ``words`` days, weeks (seven days each) or months of ``x``, counted
    from its start or end; None when the count is fuzzy or the units don't fit in ``x``."""
    low, high = count_range(words)
    if low != high or low < 1:
        return None
    start, stop = x.start, x.end + TICK
    if unit == "months":
        first = start if edge == "first" else shift(stop, "month", -low)
        last = shift(start, "month", low) if edge == "first" else stop
        if first < start or last > stop:
            return None
        return upto(first, last)
    length = timedelta(days=low * (7 if unit == "weeks" else 1))
    if length > stop - start:
        return None
    return upto(start, start + length) if edge == "first" else upto(stop - length, stop)


def open_window(word: str, start: datetime, end: datetime) -> TimeWindow | None:
    """The open window "since", "after", "before" or "until" (any other ``word``) make of
    an expression's span; None past the calendar's ends."""
    try:
        if word == "since":
            return TimeWindow(start, None)
        if word == "after":
            return TimeWindow(end + TICK, None)
        if word == "before":
            return TimeWindow(None, start - TICK)
    except OverflowError:  # after the last or before the first moment datetime holds
        return None
    return TimeWindow(None, end)

"""Two expressions joined into one window: "between X and Y", "from X to Y", and without
"between" ("June-July 2023", "spring and summer 2023", "1-15 May 2023", "the spring of
2023 and 2024"). Finders of :mod:`hindsight_tools.query.time_window`, whose docstring
states the conventions."""

from __future__ import annotations

import itertools
import re
from datetime import datetime, timedelta

from hindsight_tools.query.bare_days import BARE_DAY, BARE_DAY_AFTER, day_after, day_of
from hindsight_tools.query.expressions import MAX_TRIES_PER_RULE, Found, parse_at
from hindsight_tools.query.spans import FLAGS, HAS_YEAR, Span
from hindsight_tools.query.time_rules import YEAR
from hindsight_tools.query.window import TimeWindow

__all__ = ["EITHER_ORDER", "JOIN", "find_joined", "find_range", "range_window"]

_RANGE = re.compile(r"\b(?P<kw>between|from) ", FLAGS)
_RANGE_SEP = re.compile(r" (?:and|to|till|until|through|thru) | ?- ?", FLAGS)
_ONWARDS = re.compile(r" on(?:wards?)?\b", FLAGS)
_PRESENT = re.compile(r"(?:now|the present|present|date)\b", FLAGS)
_NOW = re.compile(r"(?:right )?now|the present", FLAGS)  # not "the release date to May"
_MAX_RANGE_START = 60  # characters of X to look through for "and"/"to"


def find_range(text: str, now: datetime) -> Found | None:
    for m in itertools.islice(_RANGE.finditer(text), MAX_TRIES_PER_RULE):
        seps = _RANGE_SEP.finditer(text, m.end(), m.end() + _MAX_RANGE_START)
        for sep in itertools.islice(seps, MAX_TRIES_PER_RULE):
            found = range_window(text, m.end(), sep, now, ordered=True)
            if found is not None:
                return m.start(), found[1] - m.start(), found[0]
        first = parse_at(text, m.end(), now) if m["kw"].lower() == "from" else None
        onwards = _ONWARDS.match(text, first[1]) if first else None
        if first and onwards:
            return m.start(), onwards.end() - m.start(), TimeWindow(first[0].start, None)
    return None


def range_window(
    text: str,
    x_at: int,
    sep: re.Match[str],
    now: datetime,
    y: tuple[Span, int] | None = None,
    *,
    same_name: bool = False,
    ordered: bool = False,
) -> tuple[TimeWindow, int] | None:
    """X from ``x_at`` to ``sep``, Y after it (``y`` when already read): their hull. With
    ``same_name``, a Y of a year alone is X's period in that year ("in the spring of 2023
    and 2024" ends with the spring of 2024). With ``ordered`` (from X to Y), X may be "now",
    and the window runs from X's start to Y's end whenever Y doesn't end before X starts:
    "from the beginning of the year through today" stops today, "from now until the end of
    the year" starts now. A bare Y that ended before an X placed by its year or, by its
    words, holding now or ahead is its next occurrence ("from today until Christmas"); an
    X not so placed is moved before Y instead ("between March and May 2023", "from Monday
    until Friday")."""
    if y is None:
        y = parse_at(text, sep.end(), now)
    if y is None:
        present = _PRESENT.match(text, sep.end())
        y = (Span(now, now), present.end()) if present else None
    bare = BARE_DAY_AFTER.match(text, sep.end()) if y is None else None
    x = parse_at(text, x_at, now, sep.start()) if y or bare else None
    if x is None and y is not None and ordered:
        present = _NOW.fullmatch(text, x_at, sep.start())
        x = (Span(now, now), sep.start()) if present else None
    if x is None and y is not None:
        x = day_of(text, x_at, sep.start(), y[0], sep.end())
    if y is None and x is not None and bare is not None:
        y = day_after(bare, x[0], HAS_YEAR.search(text, x_at, sep.start()) is not None)
    if x is None or y is None:
        return None
    if same_name and _YEAR_ALONE.fullmatch(text, sep.end(), y[1]):
        moved = _in_year(text[x_at : sep.start()], text[sep.end() : y[1]], now)
        y = y if moved is None else (moved, y[1])
    # placed: by its year, or by its words as holding now or lying ahead ("now", "today",
    # "this month", "next week"; not "June", though under way, nor "last week")
    placed = HAS_YEAR.search(text, x_at, sep.start()) or (
        x[0].end >= now and _FROM_NOW.search(text, x_at, sep.start())
    )
    if ordered and placed and y[0].end < x[0].start:
        y = _after(text, sep, x[0], y, now)
        if y[0].end < x[0].start:
            return None  # "from today until Feb 29" asked in June: no such end ahead
    (y_start, y_end), stop = y
    x_start, x_end = x[0]
    if not placed and (x_start > y_end or HAS_YEAR.search(text, sep.end(), stop)):
        # "between March and May 2023": March of 2023, the one before May 2023 ends; not
        # "between today and June 2025"
        anchored = parse_at(text, x_at, y_end, sep.start())
        x_start, x_end = anchored[0] if anchored else (x_start, x_end)
    if ordered and x_start <= y_end and (y_end < x_end or y_start < x_start):
        # from X's start to Y's end: "from the beginning of the year through today" stops
        # today, "from now until the end of the year" starts now
        return TimeWindow(x_start, y_end), stop
    return TimeWindow(min(x_start, y_start), max(x_end, y_end)), stop


_YEAR_ALONE = re.compile(YEAR, FLAGS)
# words that place a period from now: an X so placed that holds now or lies ahead moves a
# bare Y after it; a Y so placed ("next March", "the last week of May") is never moved
_FROM_NOW = re.compile(
    r"\b(?:now|present|today|tonight|yesterday|tomorrow|last|this|next|past|previous|ago)\b",
    FLAGS,
)
# a bare name's next occurrences, tried in turn: a weekday's a week on, a day of the
# month's a month on, a month's, season's, holiday's or date's a year on
_LATER = (timedelta(days=7), timedelta(days=31), timedelta(days=366))


def _after(
    text: str, sep: re.Match[str], x: Span, y: tuple[Span, int], now: datetime
) -> tuple[Span, int]:
    """Y moved to its first occurrence that ends after X starts, when Y is a bare name:
    "from today until Christmas" asked on December 7 runs to this Christmas, not from the
    last one. Y as read otherwise."""
    y_text = text[sep.end() : y[1]]
    if HAS_YEAR.search(y_text) or _FROM_NOW.search(y_text):
        return y
    base = max(now, x.start)  # "from next week until Friday": the Friday after it
    for later in _LATER:
        try:
            moved = parse_at(text, sep.end(), base + later)
        except OverflowError:  # past the calendar's end
            return y
        if moved is not None and moved[1] == y[1] and moved[0].end >= x.start:
            return moved
    return y


def _in_year(x_text: str, year: str, now: datetime) -> Span | None:
    """The period ``x_text`` names, in ``year`` instead of its own; None when it names
    no year or is read otherwise."""
    years = list(_YEAR_ALONE.finditer(x_text))
    if not years:
        return None
    last = years[-1]
    moved = x_text[: last.start()] + year + x_text[last.end() :]
    found = parse_at(moved, 0, now)
    return None if found is None or found[1] != len(moved) else found[0]


# "June-July 2023", "spring and summer 2023", "January or February 2024", "1-15 May 2023":
# two expressions joined, read as from the first to the second, the first placed before
# the second ends when it has no year (as after "between"). Only a second that names its
# year joins, or a bare day of its month before or after a date ("the 3rd and 4th of May",
# "May 3rd and 4th"): after "and", "fall", "may" and "date" are as often words, "May and
# June" people, and a second without a year would be read against now, not after the first.
JOIN = re.compile(r" ?[-/&] ?| (?:and|or|to|through|thru|till|until) ", FLAGS)
_MAX_JOINED = 45  # characters of the first expression to look back through


def find_joined(text: str, now: datetime) -> Found | None:
    for sep in itertools.islice(JOIN.finditer(text), MAX_TRIES_PER_RULE):
        y = parse_at(text, sep.end(), now)
        if y is None and (
            EITHER_ORDER.fullmatch(sep.group()) is None
            or BARE_DAY_AFTER.match(text, sep.end()) is None
        ):
            continue  # "on May 3rd and 4th": a bare day after a date is read by its month
        # a second without its year joins only as a day to a bare day: "the 3rd and 4th of
        # May", not "my top 3 and yesterday's"
        bare_first = y is not None and not HAS_YEAR.search(text, sep.end(), y[1])
        if bare_first and not BARE_DAY.match(text, sep.end()):
            continue
        lookback = max(0, sep.start() - _MAX_JOINED)
        starts = [p for p in range(lookback, sep.start()) if p == 0 or text[p - 1] == " "]
        for x_at in starts:  # the longest first expression first
            if bare_first and not BARE_DAY.fullmatch(text, x_at, sep.start()):
                continue
            either = EITHER_ORDER.fullmatch(sep.group()) is not None
            found = range_window(text, x_at, sep, now, y, same_name=either, ordered=not either)
            if found is not None:
                return x_at, found[1] - x_at, found[0]
    return None


# "and", "or": the two in either order, whichever is nearer ("on Friday or Thursday" asked
# on a Wednesday is the Thursday and Friday just gone); "-", "to": from the first to the second
EITHER_ORDER = re.compile(r" ?& ?| (?:and|or) ", FLAGS)

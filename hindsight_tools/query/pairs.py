"""Two names of one kind joined into one window: "in January and February", "on Monday
and Tuesday", "in the summer of 2021 and the fall", "last summer and fall". A finder of
:mod:`hindsight_tools.query.time_window`, whose docstring states the conventions."""

from __future__ import annotations

import itertools
import re
from datetime import datetime, timedelta

from hindsight_tools.query.expressions import MAX_TRIES_PER_RULE, Found, parse_at
from hindsight_tools.query.ranges import EITHER_ORDER, JOIN, range_window
from hindsight_tools.query.spans import FLAGS, TICK, Span, midnight, shift
from hindsight_tools.query.time_rules import MONTH_FULL, NOT_NAME, SEASON, WEEKDAY, YEAR
from hindsight_tools.query.window import TimeWindow

__all__ = ["find_named_pair"]

# "in January and February", "on Monday and Tuesday": two names of one kind after a word
# that makes the first a time ("in Monday standups" is a meeting), the second without a
# year. Of one kind, since after "and" a look-alike is as often a word ("in June and fall
# asleep"); not before a habit ("on Tuesday and Thursday mornings").
_MONTHS_SEASONS = r"\b(?:in|during|throughout|around|over) (?P<the>the )?"
_FIRST_YEAR = rf"(?P<xy>,? (?:of )?{YEAR})?"
# "last summer and fall", "last June to August": the first as "last" reads it, the second
# from the first's start ("last fall and winter" asked in March is September to February)
_LAST = r"\b(?P<last>last |this past )"
_PAIR_KINDS = (
    (_MONTHS_SEASONS, rf"{MONTH_FULL}{NOT_NAME}", _FIRST_YEAR),
    (_MONTHS_SEASONS, rf"{SEASON}{NOT_NAME}", _FIRST_YEAR),
    (r"\b(?:on|over|during) ", WEEKDAY, ""),
    (_MONTHS_SEASONS, r"Q[1-4]\b", _FIRST_YEAR),
    (_LAST, rf"{MONTH_FULL}{NOT_NAME}", ""),
    (_LAST, rf"{SEASON}{NOT_NAME}", ""),
    (_LAST, WEEKDAY, ""),
)
_HABIT = (
    r"(?! (?:mornings|afternoons|evenings|nights|semesters?|terms?|classes|courses|sessions"
    r"|shifts|standups?|meetings|lessons|sales|schedules?)\b)"
)
# "in the summer and fall asleep", "last summer and fall behind": a verb ("fall over the
# holidays", "fall back home" are seasons)
_FALL_VERB = r"(?!(?<=\bfall) (?:asleep|apart|behind|short|ill|in love)\b)"
_PAIRS = tuple(
    re.compile(
        rf"{context}(?P<x>{kind}){year}(?:{JOIN.pattern})(?:the )?(?P<y>{kind})"
        rf"(?!,? (?:of )?\d){_HABIT}{_FALL_VERB}",
        FLAGS,
    )
    for context, kind, year in _PAIR_KINDS
)


def find_named_pair(text: str, now: datetime) -> Found | None:
    found: list[Found] = []
    for pattern in _PAIRS:
        for m in itertools.islice(pattern.finditer(text), MAX_TRIES_PER_RULE):
            # where a rule reading the first alone would start: "the summer of 2021"
            groups = m.groupdict()
            at = (
                m.start("the")
                if groups.get("the")
                else m.start("last" if groups.get("last") else "x")
            )
            if groups.get("xy") or groups.get("last"):
                window = (
                    _last_pair(text, m, now) if groups.get("last") else _after_dated(text, m, now)
                )
                if window is not None:
                    found.append((at, window[1] - at, window[0]))
                    break
                continue
            sep = JOIN.match(text, m.end("x"))
            window = range_window(text, m.start("x"), sep, now) if sep else None
            if window is None:
                continue
            if EITHER_ORDER.fullmatch(text, m.end("x"), m.start("y")):
                swapped = _reversed_pair(text, m, now)
                window = min(window, swapped or window, key=lambda w: _length(w[0]))
            found.append((at, window[1] - at, window[0]))
            break
    return min(found, key=lambda f: (f[0], -f[1]), default=None)


def _reversed_pair(text: str, m: re.Match[str], now: datetime) -> tuple[TimeWindow, int] | None:
    """The first name's latest occurrence and the second's just before it ends."""
    x = parse_at(text, m.start("x"), now, m.end("x"))
    y = parse_at(text, m.start("y"), x[0].end, m.end("y")) if x else None
    if x is None or y is None:
        return None
    return TimeWindow(min(x[0].start, y[0].start), max(x[0].end, y[0].end)), m.end("y")


def _after_dated(text: str, m: re.Match[str], now: datetime) -> tuple[TimeWindow, int] | None:
    """The first name with its year, and the first occurrence of the second from its start."""
    x = parse_at(text, m.start("x"), now, m.end("xy"))
    y = _first_from(text, m.start("y"), m.end("y"), x[0]) if x else None
    if x is None or y is None:
        return None
    return TimeWindow(x[0].start, max(x[0].end, y.end)), m.end("y")


def _last_pair(text: str, m: re.Match[str], now: datetime) -> tuple[TimeWindow, int] | None:
    """ "last X and Y": the X "last" names and the first Y from its start, if that Y began
    before the day of asking (else the X before it: "last Monday through Friday" asked on
    a Tuesday is the week before). After "and"/"or" the two may come in either order: the
    reading with more names as "last" alone reads them (or under way, as the fall is in
    "last summer and fall" asked in October) wins, then the one of fewer months (days, of
    weekdays), then the order written."""
    today = midnight(now.date())

    def as_read(span: Span, name: str) -> bool:
        alone = parse_at(f"{m['last']}{name}", 0, now)
        return span.start < today <= span.end or (alone is not None and alone[0] == span)

    def pair(first: str, y_at: int, y_end: int) -> tuple[int, Span] | None:
        at = now
        for _ in range(2):
            x = parse_at(f"{m['last']}{first}", 0, at)
            y = _first_from(text, y_at, y_end, x[0]) if x else None
            if x is None or y is None:
                return None
            if y.start < today:
                read = as_read(x[0], first) + as_read(y, text[y_at:y_end])
                return read, Span(x[0].start, max(x[0].end, y.end))
            at = x[0].start
        return None

    found = [pair(m["x"], m.start("y"), m.end("y"))]
    if EITHER_ORDER.fullmatch(text, m.end("x"), m.start("y")):
        found.append(pair(m["y"], m.start("x"), m.end("x")))
    readings = [f for f in found if f]
    weekdays = re.fullmatch(WEEKDAY, m["x"], FLAGS) is not None

    def size(w: Span) -> int:
        months = (w.end.year - w.start.year) * 12 + w.end.month - w.start.month
        return (w.end - w.start).days if weekdays else months

    best = min(readings, key=lambda f: (-f[0], size(f[1])), default=None)  # stable: as written
    return None if best is None else (TimeWindow(*best[1]), m.end("y"))


def _first_from(text: str, y_at: int, y_end: int, x: Span) -> Span | None:
    """The first period the words from ``y_at`` to ``y_end`` name from ``x``'s start, within
    a year of it (a week, of a weekday)."""
    unit = "week" if re.fullmatch(WEEKDAY, text[y_at:y_end], FLAGS) else "year"
    try:
        within = shift(x.start, unit, 1) - TICK
    except (ValueError, OverflowError):  # year 9999
        return None
    y = parse_at(text, y_at, within, y_end)
    return None if y is None or y[0].start < x.start else y[0]


def _length(window: TimeWindow) -> timedelta:
    days = window.days()
    return timedelta.max if days is None else timedelta(days=days)

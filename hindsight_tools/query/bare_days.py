"""A day of the month named by its number alone, joined to a date that names the month:
"between 1 and 15 May 2023", "from the 3rd to the 10th of June", "between June 3 and 5",
"May 3rd and 4th". Shared by the ranges and joined expressions of
:mod:`hindsight_tools.query.time_window`."""

from __future__ import annotations

import re
from datetime import timedelta

from hindsight_tools.query.counts import COUNT
from hindsight_tools.query.spans import FLAGS, TICK, Span, day_span
from hindsight_tools.query.time_rules import UNIT, YEAR

__all__ = ["BARE_DAY", "BARE_DAY_AFTER", "day_after", "day_of"]

# "between 1 and 15 May 2023", "from the 3rd to the 10th of June": a day without its month
BARE_DAY = re.compile(r"(?:the )?(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?", FLAGS)


# "2-3 days ago", "1 or 2 weeks after June 5": counts of units, not days of a month
_UNITS = re.compile(rf"{COUNT} {UNIT}s?\b", FLAGS)


def day_of(text: str, x_at: int, x_end: int, y: Span, y_at: int) -> tuple[Span, int] | None:
    """A bare day number before a single day ``y`` (read from ``y_at``): that day of ``y``'s
    month; None before a count of units."""
    m = BARE_DAY.fullmatch(text, x_at, x_end)
    if m is None or y.end + TICK - y.start != timedelta(days=1) or _UNITS.match(text, y_at):
        return None
    try:
        start = y.start.replace(day=int(m["day"]))
    except ValueError:  # the 31st of a shorter month
        return None
    return (day_span(start.date()), x_end) if start <= y.start else None


# "between June 3 and 5", "between March 3 and 5, 2023": a bare day after a date, where the
# question goes on, not a count ("and 5 friends") or a clock time ("and 5 pm", "until 11
# at night")
BARE_DAY_AFTER = re.compile(
    BARE_DAY.pattern + rf"\b(?!:)(?:,? {YEAR})?"
    r"(?=$|[?.!,;)]| (?:and|or|did|do|does|was|were|is|are|had|has|have|what|when|where"
    r"|who|how|why|with|for|while|during)\b)",
    FLAGS,
)


def day_after(m: re.Match[str], x: Span, x_has_year: bool) -> tuple[Span, int] | None:
    """A bare day number after a single day ``x``: that day of ``x``'s month, not before it;
    a year after the day is both days' when ``x`` names none ("March 3 and 5, 2023")."""
    if x.end + TICK - x.start != timedelta(days=1) or (m["year"] and x_has_year):
        return None
    try:
        first = x.start if not m["year"] else x.start.replace(year=int(m["year"]))
        last = first.replace(day=int(m["day"]))
        return (day_span(last.date()), m.end()) if last >= first else None
    except (ValueError, OverflowError):  # the 31st of a shorter month, or past year 9999
        return None

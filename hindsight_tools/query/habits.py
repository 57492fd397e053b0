"""Whether a period a text names is a habit's, not one period: "What do I usually do in
summer?" asks about every summer, not the last one, and "In summer I typically go hiking"
tells of every summer.

Only a bare name counts (a month, season, weekday, quarter or holiday, or two of them
joined) or a part of the week, month or year holding now ("at the end of the month"), with
"usually", "typically" or "habitually" in its clause. With a year, a relative word or a
range ("What did I usually eat last summer?", "… since January", "… between March and
May") the period is one, and the window stands. Not "often", "always", "regularly",
"normally", "generally" or "tend to": "Did I often run in March?", "Did the backup run
normally on Friday?", "Was the team generally happy in March?" ask about one period.
"""

from __future__ import annotations

import re

from hindsight_tools.query.holidays import HOLIDAY_NAME
from hindsight_tools.query.spans import FLAGS
from hindsight_tools.query.time_rules import MONTH_ANY, SEASON, WEEKDAY

__all__ = ["HABITUAL", "names_a_habit"]

HABITUAL = re.compile(r"\b(?:usually|typically|habitually)\b", FLAGS)
_NAME = rf"(?:{MONTH_ANY}|{SEASON}|{WEEKDAY}|Q[1-4]\b|{HOLIDAY_NAME})"
_BARE_NAMES = re.compile(
    rf"(?:(?:in|during|on|over|at|around|throughout) )?(?:the )?{_NAME}"
    rf"(?: ?(?:and|or|&|-|/|to) ?(?:the )?{_NAME})?"
    # a part of the unit holding now: "at the end of the month", "early in the year",
    # "midweek" (read as "the middle of the week")
    r"|(?:(?:in|during|on|over|at|around|by) )?(?:(?:the )?(?:beginning|start|middle|end) of"
    r"|early|mid|late) the (?:week|month|year)",
    FLAGS,
)
# A habit word counts this many characters either side of the period, within its clause:
# "What did I do in summer, and where do I usually go?" asks about one summer, while
# "During Thanksgiving, we usually watch a few movies" tells a habit.
HABIT_REACH = 60
_CLAUSE_END = re.compile(r"[.!?;]|, (?:and|but|or|so|yet|while|whereas)\b", FLAGS)


def names_a_habit(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a bare name with a habit word near it in its clause."""
    if _BARE_NAMES.fullmatch(text, start, end) is None:
        return False
    low, high = max(0, start - HABIT_REACH), min(len(text), end + HABIT_REACH)
    for mark in _CLAUSE_END.finditer(text, low, high):
        if mark.end() <= start:
            low = mark.end()
        elif mark.start() >= end:
            high = mark.start()
            break
    return any(
        _COMPARED.search(text, max(low, h.start() - 20), h.start()) is None
        for h in HABITUAL.finditer(text, low, high)
    )


# "as I usually do", "more than I'd usually do", "like I typically do": one period compared
# with the habit, not the habit ("what do I like to do usually in summer", "what is the way
# I usually commute in winter" ask the habit)
_PRONOUN = r"(?:i|we|you|he|she|they|it)(?:'d|'ll|'m|'re|'s|'ve)?"
_AUXILIARY = r"(?: (?:do|does|did|would|will|can|am|is|are|was|were))?"
_COMPARED = re.compile(rf"(?:\b(?:as|than)(?: {_PRONOUN})?|\blike {_PRONOUN}){_AUXILIARY} $", FLAGS)

"""Rewrites that make a query's time words explicit before the rules of
:mod:`hindsight_tools.query.time_window` read it (its docstring states the conventions).

A name inside a relative unit is pinned to that unit: "in March of last year" is read as
"in March of 2023", "on Monday of last week" as that Monday's date, "since last year in
the summer" as "since summer of 2023", "the summer before last" as "the summer of 2022".
The rules then read a name with its year or a date, forms they already know, alone or
joined ("in March and April of last year", "on Monday and Tuesday of last week"), so each
name needs no relative form of its own.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from datetime import date, datetime, timedelta

from hindsight_tools.query.counts import COUNT, count_range
from hindsight_tools.query.expressions import parse_at
from hindsight_tools.query.holidays import HOLIDAY_NAME
from hindsight_tools.query.spans import FLAGS, shift
from hindsight_tools.query.time_rules import (
    MONTH_FULL,
    MONTH_STEM,
    NOT_NAME,
    SEASON,
    WEEKDAY,
    WEEKDAYS,
)
from hindsight_tools.query.wording import plain_wording

__all__ = ["pin_relative_names", "pin_relative_times", "rewrite", "spell_out"]


def rewrite(text: str, now: datetime) -> str:
    """``text`` normalised, with two-digit years, fortnights, names in relative units and
    "this time last year" spelled out."""
    return pin_relative_times(spell_out(text, now), now)


def spell_out(text: str, now: datetime) -> str:
    """``text`` normalised, with two-digit years, fortnights and seasons of several years
    spelled out and its wording made plain (:mod:`hindsight_tools.query.wording`): what
    reads the same from any day but the centuries ``now`` places a two-digit year in."""
    spelled = _FORTNIGHT.sub("two weeks", _full_years(_normalise(text), now))
    spelled = _SEASONS_OF.sub(r"\g<name>", spelled) if "s of " in spelled else spelled
    return plain_wording(spelled)


def pin_relative_times(text: str, now: datetime) -> str:
    """Names in relative units and "this time last year" pinned against ``now``."""
    return _this_time(pin_relative_names(text, now), now)


# "this time last year" is some days either side of that day, "a year ago today" the day.
# After "since", "until", "between", or "from" before "to", it is the day alone: "since
# this time last year" opens a window there, not a fortnight ("photos from this time last
# year" are the fortnight's).
_THIS_TIME = re.compile(
    r"(?:(?P<open>\b(?:since|before|until|till|after|between) )|(?P<from>\bfrom ))?"
    r"\b(?:(?:around|about|at) )?this time (?P<mod>last|next) (?P<unit>year|month|week)\b"
    r"(?(from)(?= (?:to|until|till|through)\b| ?-))"
    r"|\b(?:a|one) (?P<ago>year|month|week) ago today\b",
    FLAGS,
)
_THIS_TIME_DAYS = {"year": 14, "month": 3, "week": 0}


def _this_time(text: str, now: datetime) -> str:
    def date_of(m: re.Match[str]) -> str:
        unit = (m["unit"] or m["ago"]).lower()
        step = 1 if m["mod"] and m["mod"].lower() == "next" else -1
        try:
            day = shift(now, unit, step).date()
            opened = m["open"] or m["from"]
            around = timedelta(days=0 if m["ago"] or opened else _THIS_TIME_DAYS[unit])
            first, last = day - around, day + around
        except (ValueError, OverflowError):  # past datetime's years
            return m[0]
        if first.year not in _READ_YEARS or last.year not in _READ_YEARS:
            return m[0]
        if first == last:
            return f"{opened or ''}{_spelled(day)}"
        return f"between {_spelled(first)} and {_spelled(last)}"

    lower = text.lower()
    return _THIS_TIME.sub(date_of, text) if "this time" in lower or "ago today" in lower else text


def _spelled(day: date) -> str:
    return f"{day:%B} {day.day}, {day.year}"


_PUNCTUATION = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u2010": "-", "\u2013": "-", "\u2014": "-"}
)


def _normalise(text: str) -> str:
    """NFKC, curly quotes, hyphens and dashes made plain, runs of whitespace one space."""
    # NFKC turns full-width digits into ASCII ones; single spaces let the rules spell a
    # gap as " " and use fixed-width lookbehinds
    return " ".join(unicodedata.normalize("NFKC", text).translate(_PUNCTUATION).split())


# "the last fortnight", "a fortnight ago": read as the two weeks they are
_FORTNIGHT = re.compile(r"\b(?:a |one )?fortnight\b", FLAGS)

# "the summers of 2022 and 2023": read as "the summer of 2022 and 2023" (not "falls",
# a name as often: "the Falls of 2023")
_SEASONS_OF = re.compile(
    r"\b(?P<name>spring|summer|autumn|winter)s(?= of (?:1[5-9]|2\d)\d\d\b)", FLAGS
)

# "summer of '23", "May '19": an apostrophe and two digits, not a decade ("the '90s") nor a
# count ("'24 hours'")
_SHORT_YEAR = re.compile(r"(?<![\w'])'(?P<yy>\d\d)\b(?!'?s\b| ?(?:hours?|minutes?|days?|%))", FLAGS)
# A two-digit year is the latest such year up to this many years after now
_SHORT_YEAR_AHEAD = 10


def _full_years(text: str, now: datetime) -> str:
    """``text`` with each two-digit year after an apostrophe written out in full."""

    def full(m: re.Match[str]) -> str:
        year = now.year // 100 * 100 + int(m["yy"])
        return str(year - 100 if year > now.year + _SHORT_YEAR_AHEAD else year)

    return _SHORT_YEAR.sub(full, text)


# How many units back (negative: ahead) a relative unit lies: "last year" 1, "this week" 0,
# "next year" -1, "the year before last" 2, "three weeks ago" 3. "Several years ago" has no
# one year; "the last year", "the past week" are rolling spans, not calendar units; both
# are left to the rules.
def _units_back(m: re.Match[str]) -> int | None:
    if m["mod"]:
        return {"last": 1, "this": 0, "next": -1, "coming": -1}[m["mod"].lower()]
    if m["previous"]:
        return 1
    if m["count"]:
        low, high = count_range(m["count"])
        return low if low == high else None
    return 2  # before last


def _unit(name: str) -> str:
    return (
        rf"(?:(?<!the )(?P<mod>last|this|next|coming) {name}|(?:the )?(?P<previous>previous) "
        rf"{name}|(?:the )?{name} before last|(?P<count>{COUNT}) {name}s? ago)\b"
    )


# A word that makes the name a time, as the rules ask of a look-alike: "in March of last
# year", not "Did we march last year?", "I had a bad fall last year", "I met April last
# year". Winter is not pinned: which December to February "the winter of last year" is
# depends on the speaker.
_NAMES = (
    rf"(?:{MONTH_FULL}|(?:spring|summer|autumn|fall)\b|Q[1-4]\b|H[12]\b|{HOLIDAY_NAME}){NOT_NAME}"
)
_YEAR_NAME = rf"(?P<name>{_NAMES})"
# A second name joined to a first after a time word ("in March and April of last year")
# shares its word; "to", "and", "from" alone are no time word ("I talked to April last
# year").
_FIRST_NAME = _NAMES + r" ?(?:and|or|to|&|-|through|thru|till|until) ?(?:the )?"
_TIME_WORD = (
    r"(?P<lead>\b(?:(?:in|during|over|around|at|on|throughout|through|since|until|till"
    rf"|before|after|by|between|early|mid|late)[ -](?:the )?(?:{_FIRST_NAME})?"
    rf"|from (?:the )?{_FIRST_NAME}))"
)
# "in March of last year", "during the summer two years ago", "at Christmas last year",
# "from March to May of last year"
_NAME_OF_YEAR = re.compile(rf"{_TIME_WORD}{_YEAR_NAME} (?:of |in )?{_unit('year')}", FLAGS)
# "from March of last year to now", "from June last year onwards": "from" before one name
# is a time word before a range's second half or "on" only ("What did I get from April
# last year?")
_FROM_NAME_OF_YEAR = re.compile(
    rf"(?P<lead>\bfrom (?:the )?){_YEAR_NAME} (?:of |in )?{_unit('year')}"
    r"(?= (?:to|until|till|through|thru|onwards?)\b| on(?:$|[?.!,;])| ?-)",
    FLAGS,
)
# "last year in March", "since last year in the summer": the word goes, so that what comes
# before ("since") reads the name
_YEAR_THEN_NAME = re.compile(
    rf"\b{_unit('year')} (?:in|during|over|around|at|on) (?:the )?{_YEAR_NAME}", FLAGS
)
# "on Monday of last week", "Tuesday last week", "Friday two weeks ago"; a weekend is its
# week's, as "last weekend" is last week's ("Saturday two weekends ago")
_WEEK = _unit("week(?:end)?")
_DAY_OF_WEEK = re.compile(rf"\b(?P<name>{WEEKDAY}){NOT_NAME} (?:of |in )?{_WEEK}", FLAGS)
# "last week on Monday", "two weeks ago Friday"
_WEEK_THEN_DAY = re.compile(rf"\b{_WEEK} (?:on )?(?P<name>{WEEKDAY}){NOT_NAME}", FLAGS)
# "the summer before last", "the Monday before last": the one before "last summer", "last
# Monday", as "the week before last" is the week before last week
_BEFORE_LAST = re.compile(
    rf"\bthe (?P<name>(?:{MONTH_FULL}|{SEASON}|{WEEKDAY}|{HOLIDAY_NAME}){NOT_NAME}) "
    # not "the Friday before last Christmas", "… before last week": a period counted from
    rf"before last\b(?! (?:week|weekend|month|year|{MONTH_FULL}|{SEASON}|{WEEKDAY}"
    rf"|{HOLIDAY_NAME}))",
    FLAGS,
)
# "two summers ago", "three Christmases ago", "two Junes ago": the one so many before the
# latest, as "the summer before last" is the one before "last summer"
_YEARLY_AGO = re.compile(
    rf"\b(?P<count>{COUNT}) (?:(?P<name>spring|summer|autumn|fall|winter|christmas|easter"
    rf"|thanksgiving|halloween|{MONTH_STEM})(?:es|s)|(?P<y>januar|februar)ies) ago\b",
    FLAGS,
)
# A pinned year must be one the rules read as a year (time_rules.YEAR), or the name would
# be read against now after all
_READ_YEARS = range(1500, 3000)


def pin_relative_names(text: str, now: datetime) -> str:
    """``text`` with each month, season, quarter, half or holiday named in a relative year
    followed by that year ("March of 2023"), and each weekday named in a relative week
    written as its date ("May 6, 2024"), both resolved against ``now``."""

    def in_year(m: re.Match[str]) -> str:
        back = _units_back(m)
        if back is None or now.year - back not in _READ_YEARS:
            return m[0]
        lead = m["lead"] if "lead" in m.re.groupindex else ""
        return f"{lead}{m['name']} of {now.year - back}"

    def in_week(m: re.Match[str]) -> str:
        back = _units_back(m)
        try:
            monday = now.date() - timedelta(days=now.weekday(), weeks=back or 0)
            day = monday + timedelta(days=WEEKDAYS.index(m["name"].lower()))
        except OverflowError:  # a week outside datetime's years
            return m[0]
        if back is None or day.year not in _READ_YEARS:
            return m[0]
        return _spelled(day)

    def before_last(m: re.Match[str]) -> str:
        last = parse_at(f"last {m['name']}", 0, now)
        prior = parse_at(f"last {m['name']}", 0, last[0].start) if last else None
        if prior is None or prior[0].start.year not in _READ_YEARS:
            return m[0]
        start = prior[0].start
        if re.fullmatch(WEEKDAY, m["name"], FLAGS):
            return _spelled(start.date())
        return f"the {m['name']} of {start.year}"

    def years_ago(m: re.Match[str]) -> str:
        low, high = count_range(m["count"])
        name = m["name"] or f"{m['y']}y"
        last = parse_at(f"last {name}", 0, now)
        if low != high or low < 1 or last is None:
            return m[0]
        year = last[0].start.year - (low - 1)
        return f"the {name} of {year}" if year in _READ_YEARS else m[0]

    # each keyed by a word it can't match without: most texts have none, and a memory's
    # words are read on every recall that names a period
    rewrites: tuple[tuple[str, re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
        ("before last", _BEFORE_LAST, before_last),
        (" ago", _YEARLY_AGO, years_ago),
        ("year", _YEAR_THEN_NAME, in_year),
        ("year", _NAME_OF_YEAR, in_year),
        ("year", _FROM_NAME_OF_YEAR, in_year),
        ("week", _WEEK_THEN_DAY, in_week),
        ("week", _DAY_OF_WEEK, in_week),
    )
    lower = text.lower()
    for word, pattern, pin in rewrites:
        if word in lower:
            text = pattern.sub(pin, text)
    return text

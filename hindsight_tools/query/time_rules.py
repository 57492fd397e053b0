"""The vocabulary and the single-expression rules behind
:mod:`hindsight_tools.query.time_window`, whose docstring states the conventions; the
calendar arithmetic they use is :mod:`hindsight_tools.query.spans`.

A rule is a regex plus a handler that turns its match into a span relative to
``now``; handlers may raise ``ValueError``/``OverflowError`` for dates outside
``datetime``'s range, which the caller treats as "no match".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import dateparser

from hindsight_tools.query.counts import COUNT, NUMBER_WORD, count_range
from hindsight_tools.query.holidays import HOLIDAY, holiday
from hindsight_tools.query.spans import (
    FLAGS,
    Span,
    by_modifier,
    day_span,
    latest_started,
    midnight,
    modifier,
    month_span,
    quarter_span,
    season_span,
    shift,
    unit_span,
    upto,
    week_span,
    year_span,
)
from hindsight_tools.query.weekly import (
    AGO,
    NOT_OF_A_PERIOD,
    weekday_after,
    weekday_before,
    weekdays_ago,
    weekends_back,
)

# --- vocabulary ------------------------------------------------------------------------

_MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
MONTH_NUMBER = {name[:3]: n for n, name in enumerate(_MONTH_NAMES.split(), start=1)}
# "May" alone is a modal verb far more often than a month: only its capitalised form counts
MONTH_FULL = (
    r"(?:january|february|march|april|(?-i:May|MAY)|june|july|august|september|october"
    r"|november|december)\b"
)
MONTH_STEM = rf"(?:{'|'.join(_MONTH_NAMES.split())})"  # without the boundary: "two Junes ago"
MONTH_ANY = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\b\.?"
)
# "April's", "August Wilson's": a possessive marks a person, not a month
NOT_NAME = r"(?!'s\b)(?!(?-i: [A-Z][a-z]+)'s\b)"
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAYS = "|".join(WEEKDAYS)
WEEKDAY = rf"(?:{_DAYS})\b"
WEEKDAY_STEM = rf"(?:{_DAYS})"  # without the boundary, so that a plural or suffix follows
SEASON = r"(?:spring|summer|autumn|fall|winter)\b"
MOD = r"(?:last|this past|this|next|past|previous)"
UNIT = r"(?:hour|day|week|month|year)"


def year_pattern(name: str, *, guard_tail: bool = True) -> str:
    # digits glued to a year ("2022-06-05", "v2023", "$2000") mean it is not a year
    tail = r"(?![-/.]\d)" if guard_tail else ""
    return rf"(?<![\w/.$#])(?P<{name}>1[5-9]\d\d|2\d\d\d)\b{tail}{_NOT_A_MEASURE}"


# A number before a unit is an amount: "in 2000 words or less", "a budget of 2000 dollars".
# Units only: a plural subject may follow a year ("in 2020 people stayed home").
_NOT_A_MEASURE = (
    r"(?! (?:dollars|euros|bucks|yen|yuan|rupees|francs|usd|eur|gbp|words|characters|chars"
    r"|pages|tokens|calories|kcal|miles|kilometers|kilometres|km|meters|metres|kg|grams"
    r"|lbs)\b)"
)


YEAR = year_pattern("year")


# --- rules ------------------------------------------------------------------------------

Handler = Callable[[re.Match[str], datetime], Span | None]


@dataclass(frozen=True)
class Rule:
    """``strict`` scans a whole query and carries whatever context a look-alike word needs
    ("in May", not "May"); ``loose`` is used after "since", "between", "early", …, where
    that context is already given. Both put the expression itself in group ``core``."""

    name: str
    strict: re.Pattern[str]
    loose: re.Pattern[str]
    handle: Handler


def rule(name: str, core: str, handle: Handler, *, context: str = "", loose: str = "") -> Rule:
    return Rule(
        name,
        re.compile(rf"{context}(?P<core>{core})", FLAGS),
        re.compile(rf"(?P<core>{loose or core})", FLAGS),
        handle,
    )


def named_rules(
    kind: str, name: str, *, year: Handler, named: Handler, alone: str, context: str
) -> tuple[Rule, Rule, Rule]:
    """The three rules of a recurring period that has a name (a season, a holiday): with
    its year ("summer 2023", "Christmas of 2022"), after a modifier ("last summer"), and
    alone, where it needs ``context`` ("in the summer") to count as a time."""
    return (
        rule(f"{kind} and year", rf"\b(?:the )?{name},? (?:of )?{YEAR}", year),
        rule(f"{kind} after modifier", rf"\b(?P<mod>{MOD}) {name}", named),
        rule(kind, alone, named, context=context, loose=rf"\b(?:the )?{name}"),
    )


def _month(m: re.Match[str]) -> int:
    return MONTH_NUMBER[m["mon"].lower()[:3]]


def _day_words(m: re.Match[str], now: datetime) -> Span | None:
    word = " ".join(m["dw"].lower().split())
    offset = {"the day before yesterday": -2, "yesterday": -1, "last night": -1}.get(word, 0)
    offset = {"tomorrow": 1, "the day after tomorrow": 2}.get(word, offset)
    day = now.date() + timedelta(days=offset)
    part = (m["part"] or "").lower() or {"tonight": "night", "last night": "night"}.get(word, "")
    if word == "this" and not part:
        return None
    hours = {"morning": (6, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30)}
    if part not in hours:
        return day_span(day)
    first, past_last = hours[part]  # a night runs 18:00 to 06:00 the next morning
    return upto(midnight(day) + timedelta(hours=first), midnight(day) + timedelta(hours=past_last))


def _recently(m: re.Match[str], now: datetime) -> Span:
    return Span(now - timedelta(days=30), now)


def _ago(m: re.Match[str], now: datetime) -> Span:
    unit = m["unit"].lower()
    fewest, most = count_range(m["n"])
    if m["n2"] and count_range(m["n2"])[0] > most:  # "one or two weeks ago": both
        most = count_range(m["n2"])[1]
    elif m["n2"]:  # "in 2019 - 2 years ago": the first is no count, the second alone
        fewest, most = count_range(m["n2"])
    if m["more"]:  # "a week or so": one or two
        most = max(most, 2 if m["more"].lower() == "so" else NUMBER_WORD[m["more"].lower()])
    return Span(
        unit_span(unit, shift(now, unit, -most)).start,
        unit_span(unit, shift(now, unit, -fewest)).end,
    )


def _weekly(m: re.Match[str], now: datetime) -> Span:
    fewest, most = count_range(m["n"])
    fewest = 1 if m.groupdict().get("last") else fewest  # "the last three Fridays": all
    if m["wd"]:
        return weekdays_ago(WEEKDAYS.index(m["wd"].lower()), fewest, most, now)
    return weekends_back(fewest, most, now)


def _rolling(m: re.Match[str], now: datetime) -> Span:
    unit = m["unit"].lower()
    most = count_range(m["n"])[1] if m["n"] else 1
    return Span(shift(now, unit, -most), now)


def _relative_unit(m: re.Match[str], now: datetime) -> Span:
    step = {"last": -1, "this": 0, "next": 1}[modifier(m["mod"])]
    return _units_away(m["unit"].lower(), now, step)


def _two_away(m: re.Match[str], now: datetime) -> Span:
    return _units_away(m["unit"].lower(), now, 2 if m["which"].lower() == "after next" else -2)


def _units_away(unit: str, now: datetime, step: int) -> Span:
    """The calendar ``unit`` ``step`` units from the one holding ``now``."""
    if unit == "quarter":
        return month_span(now.year, 3 * ((now.month - 1) // 3 + step) + 1, 3)
    if unit == "weekend":
        saturday = week_span(now.date() + timedelta(weeks=step)).start + timedelta(days=5)
        return upto(saturday, saturday + timedelta(days=2))
    return unit_span(unit, shift(now, unit, step))


def _earlier_later(m: re.Match[str], now: datetime) -> Span:
    period = unit_span((m["unit"] or "day").lower(), now)
    return Span(period.start, now) if m["el"].lower() == "earlier" else Span(now, period.end)


def _weekend(m: re.Match[str], now: datetime) -> Span:
    # the latest weekend that has begun: this one on Saturday/Sunday, else last week's
    back = 0 if now.weekday() >= 5 else 1
    saturday = week_span(now.date() - timedelta(weeks=back)).start + timedelta(days=5)
    return upto(saturday, saturday + timedelta(days=2))


def _weekday(m: re.Match[str], now: datetime) -> Span:
    wanted, today = WEEKDAYS.index(m["wd"].lower()), now.date()
    mod = modifier(m.groupdict().get("mod") or "on")
    if mod == "last":  # strictly before today
        return day_span(weekday_before(today, wanted))
    if mod == "next":  # strictly after today
        return day_span(weekday_after(today, wanted))
    if mod == "this":  # in the current Monday-Sunday week
        return day_span(today + timedelta(days=wanted - today.weekday()))
    return day_span(today - timedelta(days=(today.weekday() - wanted) % 7))  # today counts


_DATEPARSER_SETTINGS: dict[str, object] = {
    "PREFER_DATES_FROM": "past",
    "RETURN_AS_TIMEZONE_AWARE": False,
    "REQUIRE_PARTS": ["day", "month"],
    "DATE_ORDER": "MDY",
    "PARSERS": ["custom-formats", "absolute-time"],
}


def _concrete_day(m: re.Match[str], now: datetime) -> Span | None:
    settings = {**_DATEPARSER_SETTINGS, "RELATIVE_BASE": now.replace(tzinfo=None)}
    parsed: datetime | None = dateparser.parse(m["date"], languages=["en"], settings=settings)
    return None if parsed is None else day_span(parsed.date())


def _day_range(m: re.Match[str], now: datetime) -> Span | None:
    month, first, last = _month(m), int(m["d1"]), int(m["d2"])
    if m["year"]:
        year = int(m["year"])
    else:
        year = latest_started(lambda y: month_span(y, month), now.year, now).start.year
    # a day past the month's end raises ValueError: no match
    start, end = date(year, month, first), date(year, month, last)
    return None if end < start else day_span(start, (end - start).days + 1)


def _month_year(m: re.Match[str], now: datetime) -> Span:
    return month_span(int(m["year"]), _month(m))


def _month_named(m: re.Match[str], now: datetime) -> Span:
    mod, month = m.groupdict().get("mod"), _month(m)

    def make(year: int) -> Span:
        return month_span(year, month)

    return by_modifier(mod, make, now.year, now) if mod else latest_started(make, now.year, now)


def _season_year(m: re.Match[str], now: datetime) -> Span:
    return season_span(m["season"], int(m["year"]))


def _season_named(m: re.Match[str], now: datetime) -> Span:
    mod, season = m.groupdict().get("mod"), m["season"]

    def make(year: int) -> Span:
        return season_span(season, year)

    return by_modifier(mod, make, now.year, now) if mod else latest_started(make, now.year, now)


def _quarter_code(m: re.Match[str], now: datetime) -> Span:
    quarter = int(m["q"])
    if m["year"]:
        return quarter_span(int(m["year"]), quarter)
    return latest_started(lambda y: quarter_span(y, quarter), now.year, now)


def _quarter_ordinal(m: re.Match[str], now: datetime) -> Span:
    word = m["ord"].lower()
    quarter = 4 if word in ("last", "final") else int(word[0]) if word[0].isdigit() else 0
    quarter = quarter or ("first", "second", "third", "fourth").index(word) + 1
    step = {"last": -1, "this": 0, "next": 1}[modifier(m["rel"])] if m["rel"] else 0
    return quarter_span(int(m["year"]) if m["year"] else now.year + step, quarter)


def _half_code(m: re.Match[str], now: datetime) -> Span:
    return month_span(int(m["year"]), 1 if m["h"] == "1" else 7, 6)


def _halves(m: re.Match[str], now: datetime) -> Span | None:
    # "H1 and H2 2023" is the year; "H2 and H1 2023" names no order a year can have
    first, last = int(m["h"]), int(m["h2"])
    return (
        month_span(int(m["year"]), 6 * first - 5, 6 * (last - first + 1)) if first <= last else None
    )


def _numeric_month(m: re.Match[str], now: datetime) -> Span:
    groups = m.groupdict()
    return month_span(int(groups["ny"] or groups["ny2"]), int(groups["nm"] or groups["nm2"]))


def _year(m: re.Match[str], now: datetime) -> Span:
    return year_span(int(m["year"]))


def _year_range(m: re.Match[str], now: datetime) -> Span | None:
    first, last = int(m["year"]), int(m["year2"])
    return year_span(first, last - first + 1) if 0 <= last - first <= 200 else None


_DECADE_WORDS = (
    *("twenties", "thirties", "forties", "fifties"),
    *("sixties", "seventies", "eighties", "nineties"),
)


def _decade(m: re.Match[str], now: datetime) -> Span:
    groups = m.groupdict()
    if groups.get("dec"):
        return year_span(int(groups["dec"]), 10)
    if groups.get("dw"):
        tens = _DECADE_WORDS.index(groups["dw"].lower()) + 2
        if groups.get("cent"):
            return year_span(1900 + 10 * tens, 10)
    else:
        tens = int(groups["d2"])
    # "the 90s" = the latest such decade that has begun
    return latest_started(lambda c: year_span(100 * c + 10 * tens, 10), now.year // 100, now)


_IN = r"\b(?:in|during|throughout|around|over) "
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\b(?!:)"
_MONTH_ONLY = rf"(?P<mon>{MONTH_FULL}){NOT_NAME}"

# Order breaks ties between matches starting at the same place with the same length.
RULES: tuple[Rule, ...] = (
    rule(
        "numeric date",
        r"(?<![\w/.-])(?P<date>\d{4}-\d{1,2}-\d{1,2}|\d{4}/\d{1,2}/\d{1,2}|\d{1,2}/\d{1,2}/(?:\d{4}|\d{2}))(?![\w/]|[-.]\d)",
        _concrete_day,
    ),
    rule(
        # ISO 8601's year-month, and the month before its year: "2023-06", "06/2023"
        "numeric month",
        r"(?<![\w/.-])(?:(?P<ny>1[5-9]\d\d|2\d\d\d)[-/](?P<nm>0[1-9]|1[0-2])"
        r"|(?P<nm2>0?[1-9]|1[0-2])/(?P<ny2>1[5-9]\d\d|2\d\d\d))(?![\w/]|[-.]\d)",
        _numeric_month,
    ),
    rule(
        "days of a month",
        rf"\b(?P<mon>{MONTH_ANY}) (?P<d1>{_DAY}) ?- ?(?P<d2>{_DAY})(?:,? {YEAR})?",
        _day_range,
    ),
    rule(
        "date",
        rf"\b(?:{WEEKDAY},? )?(?P<date>(?:the )?"
        rf"(?:{MONTH_ANY} (?:the )?{_DAY}(?:,? {year_pattern('y1')})?"
        rf"|{_DAY} (?:of )?{MONTH_ANY}(?:,? {year_pattern('y2')})?))",
        _concrete_day,
    ),
    rule(
        "day word",
        r"\b(?P<dw>the day before yesterday|the day after tomorrow|yesterday|today|tonight"
        r"|tomorrow|last night|this(?= (?:morning|afternoon|evening)\b))\b"
        r"(?: (?P<part>morning|afternoon|evening|night)\b)?",
        _day_words,
    ),
    rule("recently", r"\b(?:recently|lately|of late)\b", _recently),
    rule(
        "ago",
        # "two weeks ago", "one or two weeks ago", "2-3 days ago", "a month or two ago"
        rf"\b(?P<n>{COUNT})(?: ?(?:or|to|-) ?(?P<n2>{COUNT}))? (?P<unit>{UNIT})s?"
        r"(?: or (?P<more>two|three|so))? (?:ago|back)\b",
        _ago,
    ),
    rule(
        "weekly back",
        rf"\b(?P<last>(?:the |these )?(?:last|past|previous) )(?P<n>{COUNT}) "
        rf"(?:(?P<wd>{_DAYS})s|weekends)\b{NOT_OF_A_PERIOD}",
        _weekly,
    ),
    rule("weekly ago", rf"\b(?P<n>{COUNT}) (?:(?P<wd>{_DAYS})s?|weekends?) {AGO}", _weekly),
    rule(
        "rolling",
        rf"\b(?:(?:the |this )?(?:last|past|previous) (?P<n>{COUNT}) |(?:the|this) (?:last|past) )"
        rf"(?P<unit>{UNIT})s?\b(?! of\b)",
        _rolling,
    ),
    rule(
        "relative unit",
        rf"\b(?P<mod>{MOD}) (?P<unit>week|month|year|weekend|quarter)\b",
        _relative_unit,
    ),
    rule(
        "earlier/later",
        r"\b(?P<el>earlier|later) (?:this (?P<unit>week|month|year)|today)\b",
        _earlier_later,
    ),
    rule(
        "the weekend",
        # "the weekend trip" is an outing, not a date
        r"\b(?:over|on|at|during|through) the weekend\b"
        r"(?! (?:trip|getaway|plans?|retreat|job|shift)\b)",
        _weekend,
    ),
    rule("weekday after modifier", rf"\b(?P<mod>{MOD}) (?P<wd>{WEEKDAY})", _weekday),
    rule(
        "weekday",
        rf"(?P<wd>{WEEKDAY})",
        _weekday,
        context=rf"(?:(?<=\bon )|(?={WEEKDAY} (?:morning|afternoon|evening|night)\b))",
        loose=rf"(?:on )?(?P<wd>{WEEKDAY})",
    ),
    rule(
        "month and year", rf"\b(?:the month of )?(?P<mon>{MONTH_ANY}),? (?:of )?{YEAR}", _month_year
    ),
    rule("month after modifier", rf"\b(?P<mod>{MOD}) (?P<mon>{MONTH_FULL})", _month_named),
    rule(
        "month",
        _MONTH_ONLY,
        _month_named,
        context=rf"{_IN}(?:the month of )?",
        loose=rf"\b(?:the month of )?(?P<mon>{MONTH_ANY}){NOT_NAME}",
    ),
    *named_rules(
        "season",
        rf"(?P<season>{SEASON})(?: months\b)?",
        year=_season_year,
        named=_season_named,
        alone=rf"(?P<season>{SEASON}){NOT_NAME}(?! of (?!\d))",
        context=rf"{_IN}(?:the )?",
    ),
    rule("year and season", rf"{YEAR} (?P<season>{SEASON})", _season_year),
    rule(
        "before last",
        # with its preposition, so that it starts where "over the weekend" does
        r"\b(?:(?:over|on|at|during|through|in) )?the (?P<unit>week|weekend|month|year) "
        # not "the week before last year's party", "… before last summer": counted from it
        r"(?P<which>before last|after next)\b"
        r"(?! (?:week|weekend|month|year|spring|summer|autumn|fall|winter)\b)",
        _two_away,
    ),
    *named_rules(
        "holiday",
        HOLIDAY,
        year=holiday,
        named=holiday,
        # "in the new year" looks ahead; it isn't the night of New Year
        alone=rf"(?<!\bin the ){HOLIDAY}",
        # "Christmas presents", "for Halloween": a holiday as a theme, not as a time
        context=r"\b(?:over|at|during|around|on|in|through|throughout) (?:the )?",
    ),
    rule("year and holidays", rf"\bthe {YEAR} (?P<hol>holidays|holiday season)\b", holiday),
    rule("quarter code", rf"\bQ(?P<q>[1-4])\b(?:,? (?:of )?{YEAR})?", _quarter_code),
    rule("year and quarter", rf"{YEAR}[ -]?Q(?P<q>[1-4])\b", _quarter_code),
    # a half without its year is more often something else ("H1 visa", an "h1" heading,
    # "after H1, use H2"), unless the other half follows with the year ("H1 and H2 2023")
    rule("half code", rf"\bH(?P<h>[12]),? (?:of )?{YEAR}", _half_code),
    rule(
        "halves and year",
        rf"\bH(?P<h>[12]) ?(?:[-/&]|and|or|to|through) ?H(?P<h2>[12]),? (?:of )?{YEAR}",
        _halves,
    ),
    rule("year and half", rf"{YEAR}[ -]?H(?P<h>[12])\b", _half_code),
    rule(
        "ordinal quarter",
        r"\b(?:the )?(?P<ord>first|second|third|fourth|last|final|[1-4](?:st|nd|rd|th)) quarter "
        rf"(?:of )?(?:{YEAR}|(?P<rel>{MOD}) year\b)",
        _quarter_ordinal,
    ),
    rule(
        "year range",
        rf"{year_pattern('year', guard_tail=False)} ?(?:-|to) ?{year_pattern('year2')}",
        _year_range,
    ),
    rule("year", YEAR, _year, context=r"\b(?:in|during|throughout|around|circa|for|year) "),
    rule("decade", r"(?<![\w'])(?P<dec>1[5-9]\d0|2\d\d0)'?s\b", _decade),
    rule(
        "short decade",
        r"\bthe '?(?P<d2>\d)0'?s\b",
        _decade,
        loose=r"(?<![\w'])(?:the )?'?(?P<d2>\d)0'?s\b",
    ),
    rule(
        "decade in words",
        rf"\bthe (?P<cent>nineteen[ -]?)?(?P<dw>{'|'.join(_DECADE_WORDS)})\b",
        _decade,
        loose=rf"\b(?:the )?(?P<cent>nineteen[ -]?)?(?P<dw>{'|'.join(_DECADE_WORDS)})\b",
    ),
)

"""Wordings of a period made plain before the time rules read them (the conventions are
:mod:`hindsight_tools.query.time_window`'s): a part "in" a period ("early in 2023" as
"early 2023"), "midweek" as "the middle of the week", a name "in" a year ("the summer in
2023" as "the summer, 2023"), and a break within a season ("spring break") kept from being
read as the season where its edges would count. Each reads the same from any day."""

from __future__ import annotations

import re

from hindsight_tools.query.holidays import HOLIDAY_NAME
from hindsight_tools.query.spans import FLAGS
from hindsight_tools.query.time_rules import MONTH_FULL, NOT_NAME, SEASON, WEEKDAY_STEM

__all__ = ["plain_wording"]


def plain_wording(text: str) -> str:
    """``text`` with the wordings above made plain; most texts have none of their words."""
    lower = text.lower()
    if _A_TERM_WORD.search(lower):
        text = _TERM_THEN_YEAR.sub(_year_first, _TERM_OF_SEASON.sub(_joined, text))
    # the year first: "late in the summer in 2022" is August 2022
    if _IN_A_YEAR.search(lower):
        text = _IN_YEAR.sub(_in_year, text)
    if ("early" in lower or "late" in lower) and " in " in lower:
        text = _PART_IN.sub(_part_in, text)
    if "mid" in lower:
        text = _MID_UNIT.sub(_mid_unit, text)
    return text


_A_YEAR = r"(?:1[5-9]|2\d)\d\d\b"  # for lookaheads; the rules' own is time_rules.YEAR

# "early in 2023", "late in the summer", "early on in the week": a part of the period, as
# "early 2023" is (not "late in the evening", "early in the game")
_PART_IN = re.compile(
    r"(?P<before>(?:\b[\w']+ ){0,4})\b(?P<part>early|late)(?: on)? in "
    rf"(?=(?:(?:(?:the|last|this|next) )?(?:week|month|year|{SEASON})\b|{MONTH_FULL}|{_A_YEAR})"
    # not one of several joined: "early in January and February", "… June, July and August"
    rf"(?!,? (?:and|or|to|through|till|until|-|&) |, (?:{MONTH_FULL}|{SEASON})(?:,| and| or)))",
    FLAGS,
)
# Early and late of the clock or of a deadline mean the whole period: after one of these
# words ("I worked late in March", "I went to bed too late in May", "Did I submit my
# report late in June?", "I was often late in March"), or in a question that asks whether
# something was ("Was my flight late in July?", "Were the trains late in May?"). Reading
# the whole period where a part was meant only ranks more widely; the reverse would rank
# the wrong days first.
_CLOCK = (
    "work works worked working up bed sleep sleeps slept sleeping leave leaves leaving"
    " arrive arrives arrived arriving home pay pays paid paying was were is are am be been"
    " being run runs ran running open opens opened close closes closed dinner lunch"
    " breakfast submit submits submitted hand handed file filed deliver delivered come comes"
    " came coming stay stays stayed staying out wake wakes woke rent bill bills payment"
    " taxes report assignment essay homework paper application invoice"
)
_CLOCK_WORDS = frozenset(_CLOCK.split())
# between such a word and "late": "stayed up way too late", "sleep in late"
_SKIPPED = frozenset({"too", "so", "very", "really", "quite", "pretty", "always", "often"})
_SKIPPED_AFTER_VERB = _SKIPPED | {"even", "way", "in"}
_BE = frozenset({"was", "were", "is", "are", "am"})
_CLAUSE_END = (".", "?", "!", ";", ":", ",")


def _part_in(m: re.Match[str]) -> str:
    words = [w.lower() for w in m["before"].split()]
    near = next((w for w in reversed(words) if w not in _SKIPPED_AFTER_VERB), "")
    before = m.string[: m.start()].rstrip()
    asks_whether = bool(words) and words[0] in _BE and (not before or before[-1] in _CLAUSE_END)
    if near in _CLOCK_WORDS or asks_whether:
        return m[0]
    return f"{m['before']}{m['part']} "


# "in March in 2023", "during the summer in 2023", "on May 5 in 2023": the name in that
# year, as "March, 2023" is; read first, "in the summer" would be this year's. After a
# time word only, and a month by its full name ("the Women's March in 2017", "I met Jan in
# 2023", "I may in 2023" are no month).
_IN_YEAR = re.compile(
    r"(?P<lead>(?:^|\b(?:in|on|during|throughout|around|over|since|from|until|till|by|and|or"
    r"|between|to|through|at|before|after|of|for) )(?:the )?)"
    rf"(?P<name>{MONTH_FULL}{NOT_NAME}(?: \d{{1,2}}(?:st|nd|rd|th)?)?|{SEASON}|{HOLIDAY_NAME})"
    rf" in (?={_A_YEAR})",
    FLAGS,
)


_IN_A_YEAR = re.compile(rf" in {_A_YEAR}")


def _in_year(m: re.Match[str]) -> str:
    lead = m["lead"].split()
    first = lead[0].lower() if lead else ""
    # "fall" after "from" or alone is as often a tumble: "how did I recover from the fall
    # in 2022" is the year; a capitalised season after "and" a name ("Tom and Summer")
    fall = m["name"].lower() == "fall" and first in ("", "from")
    named = (
        first in ("and", "or")
        and m["name"][0].isupper()
        and m["name"].lower() in _SEASONS
        and _A_NAME_BEFORE.search(m.string, 0, m.start()) is None
    )
    return m[0] if fall or named else f"{m['lead']}{m['name']}, "


_SEASONS = frozenset({"spring", "summer", "autumn", "fall", "winter"})
# "in Spring and Summer in 2023": two seasons, not "Tom and Summer"
_A_NAME_BEFORE = re.compile(rf"\b(?:{SEASON}|{MONTH_FULL}) $", FLAGS)


# "midweek", "mid-month", "midweek last week": its middle, where the word ends its clause
# ("what did I do midweek?"); before a noun it names a thing ("my midweek run")
_MID_UNIT = re.compile(
    r"\bmid-?(?P<unit>week|month)(?: (?P<mod>last|this|next) (?P=unit))?"
    # not before a time that says which day: "mid-week, on Wednesday" is the Wednesday
    r"(?=\s*(?:[.?!;]|$)|,(?! (?:on|in|at|during)\b))",
    FLAGS,
)


def _mid_unit(m: re.Match[str]) -> str:
    return f"the middle of {(m['mod'] or 'the').lower()} {m['unit'].lower()}"


# A break within a season ("spring break", "winter recess", "fall break") ends when the
# season doesn't: spring break in March, winter break in January. What is counted from its
# end ("after", "until", "the Sunday after") or by a unit from either edge ("the week
# before") is no time, so its words are joined into one that no rule reads (the season
# alone would be read otherwise). A year after it, or inside it, is read alone, "in" that
# year, where what is asked lies in it or after it ("after"; not "until", nor after a
# winter break, which ends in the next year). "Since" and "before" alone keep the season:
# its start is near enough the break's for an open side. A term the length of its season
# ("summer break", "the fall semester", "summer camp") keeps the season's edges: "after
# the fall 2022 semester" is from December.
_TERM = r"(?:break|semester|term|recess|camp|session|vacation|holidays?)\b"
_A_TERM_WORD = re.compile(rf"\b{_TERM}")
_TERM_OF_SEASON = re.compile(
    rf"(?P<lead>\b(?:(?P<day>(?:{WEEKDAY_STEM}|weekend)s?,? )?(?:after|following)|until|till"
    rf"|(?P<unit>(?:day|week|weekend|month|{WEEKDAY_STEM})s?) (?:before|prior to)) )"
    r"(?P<term>(?:(?:the|last|this|next|this past|my|our|his|her|their|the kids') )?"
    r"(?:spring|autumn|fall|winter)"
    rf"(?:,? (?:of )?(?P<inner>{_A_YEAR}))? (?:break|recess|holidays?|vacation)\b)"
    rf"(?:,? (?:of |in )?(?P<year>{_A_YEAR}))?",
    FLAGS,
)


def _joined(m: re.Match[str]) -> str:
    joined = m["term"].replace(" ", "_").replace(",", "_")
    year = m["year"] or m["inner"]
    # after "until" nothing lies in the year; winter break 2023 ends in January 2024
    kept = not m["lead"].lower().startswith(("until", "till")) and "winter" not in joined.lower()
    lead = m["lead"]
    day = m["day"] or (m["unit"] and _A_DAY.fullmatch(m["unit"]))
    if day and _PLACED.search(m.string, 0, m.start()) is None:
        # "on Sunday after spring break": joined too, or "on Sunday" alone is last Sunday;
        # not "last Sunday, after spring break", a Sunday the words place
        lead = lead.strip().replace(",", "").replace(" ", "_") + "_"
    return f"{lead}{joined}{f' in {year}' if year and kept else ''}"


_A_DAY = re.compile(rf"(?:{WEEKDAY_STEM}|weekend)s?", FLAGS)
_PLACED = re.compile(r"\b(?:last|this|next|past|previous) $", FLAGS)


# "spring break 2023", "Christmas break in 2022", "summer camp last year": the year goes
# to the season or holiday ("spring 2023 break"), whose rules read it
_TERM_THEN_YEAR = re.compile(
    rf"\b(?P<name>{SEASON}|{HOLIDAY_NAME}) (?P<term>{_TERM})"
    rf"(?P<year>,? (?:of |in )?{_A_YEAR}| (?:last|this|next) year\b)",
    FLAGS,
)


def _year_first(m: re.Match[str]) -> str:
    return f"{m['name']}{m['year']} {m['term']}"

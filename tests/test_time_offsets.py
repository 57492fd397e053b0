"""Periods counted from another ("the week after Christmas", "two days after June 5"):
pure, no database.

The same fixed ``NOW`` and conventions as ``test_temporal.py``: Wednesday 2024-06-12,
15:30 UTC; ends inclusive (``E``).
"""

from __future__ import annotations

import pytest

from tests.test_temporal import E, assert_exact_window, at, window

OFFSETS = [
    # calendar units from the one the other period ends or starts in
    ("What did John do the week before August 3, 2023?", "2023-07-24", "2023-07-30" + E),
    ("two weeks before August 11, 2023", "2023-07-24", "2023-07-30" + E),
    ("What did I do the week after Christmas?", "2024-01-01", "2024-01-07" + E),
    ("the three weeks before May 1", "2024-04-08", "2024-04-28" + E),
    ("two days after June 5", "2024-06-07", "2024-06-07" + E),
    ("the day before Christmas Day 2023", "2023-12-24", "2023-12-24" + E),
    ("a day prior to June 5", "2024-06-04", "2024-06-04" + E),
    ("the month following March 2023", "2023-04-01", "2023-04-30" + E),
    ("the year after 2020", "2021-01-01", "2021-12-31" + E),
    # weekends: the first whole one after the period ends, the last before it starts
    ("the weekend before Christmas", "2023-12-23", "2023-12-24" + E),
    ("two weekends before Christmas", "2023-12-16", "2023-12-17" + E),
    ("the two weekends after June 7, 2024", "2024-06-08", "2024-06-16" + E),
    # a weekday: the first such day after the period ends, the last before it starts
    ("on the Sunday before October 25, 2022", "2022-10-23", "2022-10-23" + E),
    ("the Friday after October 25, 2022", "2022-10-28", "2022-10-28" + E),
    ("the Wednesday after June 5", "2024-06-12", "2024-06-12" + E),
    ("the Wednesday before June 5", "2024-05-29", "2024-05-29" + E),
    ("two Fridays after June 5", "2024-06-14", "2024-06-14" + E),
    ("the two Fridays after June 5", "2024-06-07", "2024-06-14" + E),
    ("last Sunday before October 25, 2022", "2022-10-23", "2022-10-23" + E),
    ("the Monday after Thanksgiving", "2023-11-27", "2023-11-27" + E),
    ("the Friday before Christmas", "2023-12-22", "2023-12-22" + E),
    ("the Monday before June 7, 2024", "2024-06-03", "2024-06-03" + E),
    ("the Friday after Thanksgiving", "2023-11-24", "2023-11-24" + E),
    ("What did she do on Sunday before October 25, 2022?", "2022-10-23", "2022-10-23" + E),
    ("the first Sunday after October 25, 2022", "2022-10-30", "2022-10-30" + E),
    # "before last" before a period is "before" it
    ("the Friday before last Christmas", "2023-12-22", "2023-12-22" + E),
    ("the Monday before last week", "2024-05-27", "2024-05-27" + E),
    # a possessive names its time: "yesterday's party" was yesterday
    ("What did I do the day after yesterday's party?", "2024-06-12", "2024-06-12" + E),
    # a weekday is not counted from it: "on Tuesday" is the one just gone
    ("Did I go to the gym on Tuesday after yesterday's meeting?", "2024-06-11", "2024-06-11" + E),
    # a holiday of several days is counted from its own day
    ("the day after Christmas", "2023-12-26", "2023-12-26" + E),
    ("the week before Christmas", "2023-12-18", "2023-12-24" + E),
    ("the day after Thanksgiving", "2023-11-24", "2023-11-24" + E),
    ("the weekend after Thanksgiving", "2023-11-25", "2023-11-26" + E),
    ("the week after Easter", "2024-04-01", "2024-04-07" + E),
    # the counted period is an expression like any other: it opens and joins windows
    ("since the day after Christmas", "2023-12-26", None),
    ("until the week before Easter 2023", None, "2023-04-02" + E),
    ("between the day after Christmas and New Year's Eve", "2023-12-26", "2023-12-31" + E),
    ("from the week before Christmas until New Year's Day", "2023-12-18", "2024-01-01" + E),
    ("two days before the day after Christmas", "2023-12-24", "2023-12-24" + E),
    # a preposition belongs to the period: "over the weekend" alone is last weekend
    ("What did I do over the weekend after Thanksgiving?", "2023-11-25", "2023-11-26" + E),
    ("on the weekend after next", "2024-06-29", "2024-06-30" + E),
    ("over the weekend before last", "2024-06-01", "2024-06-02" + E),
    # a holiday's part is counted from as read, a weekday of it from that day
    ("the day after Easter Monday", "2024-04-02", "2024-04-02" + E),
    ("the day before Easter Monday", "2024-03-31", "2024-03-31" + E),
    ("the day before Easter Sunday", "2024-03-30", "2024-03-30" + E),
    ("the day after Thanksgiving weekend", "2023-11-27", "2023-11-27" + E),
    # a weekday outside the holiday is its own day's; a weekday after a month is no part
    ("the day after Easter Tuesday", "2024-04-01", "2024-04-01" + E),
    ("the week after May Monday", "2024-06-03", "2024-06-09" + E),
    # "up to", "within": all the units
    ("up to three days before June 5", "2024-06-02", "2024-06-04" + E),
    ("within two days after June 5", "2024-06-06", "2024-06-07" + E),
    # after "to" or "or" a counted period is the second half of a range
    ("from June 1 to two days after June 5", "2024-06-01", "2024-06-07" + E),
    ("postponed to the week after Thanksgiving", "2023-11-27", "2023-12-03" + E),
    ("Did we meet in 2022 or the year after 2022?", "2022-01-01", "2023-12-31" + E),
    # a year, an ISO date's day or a letter before "or"/"to" is no count
    ("from June 1, 2024 to two days after June 5, 2024", "2024-06-01", "2024-06-07" + E),
    ("from 2024-06-01 to two days after June 5", "2024-06-01", "2024-06-07" + E),
    ("in 2023 or two years after 2020", "2022-01-01", "2023-12-31" + E),
    ("Plan A or two days after June 5", "2024-06-07", "2024-06-07" + E),
    # counted from today and tomorrow too
    ("the day before today", "2024-06-11", "2024-06-11" + E),
    ("a week after today", "2024-06-17", "2024-06-23" + E),
    ("two days after tomorrow", "2024-06-15", "2024-06-15" + E),
    # "the day after tomorrow" is the rules', with its part of the day
    ("the day after tomorrow morning", "2024-06-14T06:00:00", "2024-06-14T11:59:59.999999"),
    # no one span: left to "after X"
    ("the days after New Year", "2024-01-02", None),
    ("several days after June 5", "2024-06-06", None),
    ("one or two days after June 5", "2024-06-06", None),
    ("2-3 days after June 5", "2024-06-06", None),
    ("the Sundays before October 25, 2022", None, "2022-10-24" + E),
    ("2 - 3 days after June 5", "2024-06-06", None),
    ("two/three days after June 5", "2024-06-06", None),
    # a holiday's break is counted from the holiday, a dated holiday from its day
    ("the week after Christmas break", "2024-01-01", "2024-01-07" + E),
    ("What did I do the day after the July 4 holiday?", "2023-07-05", "2023-07-05" + E),
    # "since" a term within a season opens at the season's start, near the term's
    ("What have I done since last summer break?", "2023-06-01", None),
    ("What did I do during spring break?", "2024-03-01", "2024-05-31" + E),
    # a year after the term is the season's
    ("What did I do during spring break 2023?", "2023-03-01", "2023-05-31" + E),
    ("over spring break last year", "2023-03-01", "2023-05-31" + E),
    ("Since spring break 2023, what changed?", "2023-03-01", None),
    # after "after", a year with the break is read alone: what is asked lies in or after it
    ("What did I do after spring break in 2023?", "2023-01-01", "2023-12-31" + E),
    ("What did I do after the fall 2022 break?", "2022-01-01", "2022-12-31" + E),
    # a term the length of its season keeps the season's edges
    ("What did I do after the fall 2022 semester?", "2022-12-01", None),
    ("What did I do after summer break 2022?", "2022-09-01", None),
    ("the week after the holidays", "2024-01-08", "2024-01-14" + E),
    # a weekday placed by "last" is read before a break
    ("What did I do last Sunday, after spring break?", "2024-06-09", "2024-06-09" + E),
    ("What did I do last Sunday before spring break?", "2024-06-09", "2024-06-09" + E),
    # counted from now
    ("the week after next", "2024-06-24", "2024-06-30" + E),
    ("the month after next", "2024-08-01", "2024-08-31" + E),
]


@pytest.mark.parametrize(("text", "start", "end"), OFFSETS, ids=[c[0] for c in OFFSETS])
def test_counted_period_resolves_to_exact_window(
    text: str, start: str | None, end: str | None
) -> None:
    assert_exact_window(text, start, end)


@pytest.mark.parametrize(
    "text",
    [
        "the month after my wedding",
        "What did I do the day after the party?",
        # a break within a season: its edges are not the season's, and the season alone
        # is not read instead
        "What did I do the Sunday after spring break?",
        "What did I do on Sunday after spring break?",
        "What did I do on Friday before spring break?",
        "What did I do on the weekend after the spring break?",
        "What did I do on Sunday, after spring break?",
        "What did I do on Sunday after my spring break?",
        "What did I do on Sunday after spring vacation?",
        "the week after last spring break",
        "What did I do the week before spring break?",
        "How long did I work at the cafe until spring break 2023?",
        # winter break 2023 ends in January 2024: its year is no window
        "What did I do after winter break 2023?",
    ],
)
def test_a_period_counted_from_an_event_is_no_time(text: str) -> None:
    assert window(text) is None


@pytest.mark.parametrize(
    ("text", "start"),
    [("99999 years after 2020", "2021-01-01"), ("999999 weeks after June 5", "2024-06-06")],
)
def test_a_count_past_the_calendar_is_read_as_after_alone(text: str, start: str) -> None:
    assert window(text) == (at(start), None)


@pytest.mark.parametrize(
    "text",
    [
        "the day after " * 100 + "Christmas",
        "the week of the day after " * 60 + "Christmas",
        "early the week after " * 120 + "June 5",
    ],
)
def test_nesting_is_bounded(text: str) -> None:
    assert window(text) is None


def test_a_part_does_not_count_as_a_level() -> None:
    text = "late the month after the month after the month after the month after June 5"
    assert window(text) == (at("2024-10-21"), at("2024-10-31" + E))


def test_four_deep_is_read() -> None:
    assert window("the day after " * 4 + "Christmas") == (at("2023-12-29"), at("2023-12-29" + E))


@pytest.mark.parametrize(
    "text",
    [
        "What did I do Monday after work?",
        "Did Caroline go hiking Saturday after the storm?",
        "Melanie said she painted Sunday before her kids woke up.",
    ],
)
def test_a_weekday_counted_from_no_time_is_no_time(text: str) -> None:
    assert window(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "What did I do the week before last year's Christmas party?",
        "the day after this year's marathon",
    ],
)
def test_no_unit_is_counted_from_a_longer_possessive(text: str) -> None:
    # the event lies somewhere in the year: at most "before"/"after" it, never one day or week
    found = window(text)
    assert found is None or found[0] is None or found[1] is None

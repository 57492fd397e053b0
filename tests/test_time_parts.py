"""The first or last days, weeks or months of a period ("the first two weeks of March",
"the last three days of May"), a part of the unit holding now ("the beginning of the
month") and a bare day joined to a date ("May 3rd and 4th"): pure, no database.

The same fixed ``NOW`` and conventions as ``test_temporal.py``: Wednesday 2024-06-12,
15:30 UTC; ends inclusive (``E``).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hindsight_tools.query.time_window import extract_time_window
from tests.test_temporal import E, assert_exact_window, window

PARTS = [
    ("What did I do in the first two weeks of March?", "2024-03-01", "2024-03-14" + E),
    ("What happened in the first few days of June?", "2024-06-01", "2024-06-03" + E),
    ("the first couple of days of June", "2024-06-01", "2024-06-02" + E),
    ("What did I do in the last three days of May?", "2024-05-29", "2024-05-31" + E),
    ("in the first 10 days of April 2024", "2024-04-01", "2024-04-10" + E),
    ("the last two weeks of February 2024", "2024-02-16", "2024-02-29" + E),
    ("during the last two months of 2023", "2023-11-01", "2023-12-31" + E),
    ("the first 3 months of the year", "2024-01-01", "2024-03-31" + E),
    ("the last seven days of summer 2023", "2023-08-25", "2023-08-31" + E),
    # the part opens and closes windows like any expression
    ("since the first two weeks of March", "2024-03-01", None),
    # the unit holding now, as "this month" is
    ("What happened at the beginning of the month?", "2024-06-01", "2024-06-10" + E),
    ("at the start of the year", "2024-01-01", "2024-04-30" + E),
    ("the end of the month", "2024-06-21", "2024-06-30" + E),
    # a week's parts: Monday to Wednesday, Tuesday to Thursday, Thursday to Sunday
    ("What did I do at the end of last week?", "2024-06-06", "2024-06-09" + E),
    ("early last week", "2024-06-03", "2024-06-05" + E),
    ("in the middle of last week", "2024-06-04", "2024-06-06" + E),
    ("the second half of last week", "2024-06-06", "2024-06-09" + E),
    ("at the beginning of the week", "2024-06-10", "2024-06-12" + E),
    ("at the end of the week", "2024-06-13", "2024-06-16" + E),
    # a part not yet begun, asked of in the past, is the previous unit's; otherwise now's
    ("What did I do midweek?", "2024-06-11", "2024-06-13" + E),
    ("What did I do in the second half of the month?", "2024-05-16", "2024-05-31" + E),
    ("What did I eat in the last three days of the week?", "2024-06-07", "2024-06-09" + E),
    ("What am I doing at the end of the week?", "2024-06-13", "2024-06-16" + E),
    ("What will I buy at the end of the month, as I did in May?", "2024-06-21", "2024-06-30" + E),
    ("What's due at the end of the month?", "2024-06-21", "2024-06-30" + E),
    ("I'll pay the rent on the 20th of the month", "2024-06-20", "2024-06-20" + E),
    ("Did I pay the rent on the 20th of the month?", "2024-05-20", "2024-05-20" + E),
    # a statement is as often a plan told in the past: now's unit, as told
    ("I paid the rent on the 20th of the month", "2024-06-20", "2024-06-20" + E),
    ("I booked a flight to Paris at the end of the month", "2024-06-21", "2024-06-30" + E),
    # nor the present perfect, a word of arranging, or a participle without its subject
    ("Have I booked a table on the last Friday of the month?", "2024-06-28", "2024-06-28" + E),
    ("Did I already RSVP to the wedding at the end of the month?", "2024-06-21", "2024-06-30" + E),
    ("Any tickets left for the concert at the end of the month?", "2024-06-21", "2024-06-30" + E),
    ("I had a busy weekend, anything fun at the end of the week?", "2024-06-13", "2024-06-16" + E),
    ("Tell me what I did at the end of the week.", "2024-06-06", "2024-06-09" + E),
    # questions whose subject is a question word, a part set off by a comma, a request
    ("What happened at the end of the week?", "2024-06-06", "2024-06-09" + E),
    ("At the end of the week, what did I do?", "2024-06-06", "2024-06-09" + E),
    ("Do you remember what I ate at the end of the week?", "2024-06-06", "2024-06-09" + E),
    ("Where'd I go at the end of the week?", "2024-06-06", "2024-06-09" + E),
    ("What book did I read at the end of the week?", "2024-06-06", "2024-06-09" + E),
    ("Please tell me what I did at the end of the week", "2024-06-06", "2024-06-09" + E),
    # a plan told in the present, an event ahead the part belongs to
    ("Did they say the pool opens at the end of the month?", "2024-06-21", "2024-06-30" + E),
    ("Did I buy a dress for the wedding at the end of the month?", "2024-06-21", "2024-06-30" + E),
    ("I paid the rent on the 5th of the month", "2024-06-05", "2024-06-05" + E),
    ("What did I do on the 31st of the month?", "2024-05-31", "2024-05-31" + E),
    # a modal or an aim is no past; a request is
    ("This can be done at the end of the week", "2024-06-13", "2024-06-16" + E),
    ("I'm hoping to have it finished by the end of the month", "2024-06-21", "2024-06-30" + E),
    ("Could you tell me what I did at the end of the week?", "2024-06-06", "2024-06-09" + E),
    # only the sentence at hand: "went" is of another one
    ("I went home. The report is due at the end of the week.", "2024-06-13", "2024-06-16" + E),
    ("Did I see Dr. Lee at the end of the week?", "2024-06-06", "2024-06-09" + E),
    ("Remind me what I ate at the end of the week", "2024-06-06", "2024-06-09" + E),
    # a present verb, an aim or a part aimed at ("for", "to") is of now's unit
    ("I booked a flight for the end of the month", "2024-06-21", "2024-06-30" + E),
    ("I moved the dentist appointment to the end of the week", "2024-06-13", "2024-06-16" + E),
    ("We agreed to meet at the end of the week", "2024-06-13", "2024-06-16" + E),
    ("Is the concert at the end of the month sold out?", "2024-06-21", "2024-06-30" + E),
    ("What do I have to get done by the end of the week?", "2024-06-13", "2024-06-16" + E),
    ("I had a busy weekend, what's on at the end of the week?", "2024-06-13", "2024-06-16" + E),
    # a first word capitalised is no subject: "Anything" + "scheduled" is no past
    ("Anything scheduled at the end of the month?", "2024-06-21", "2024-06-30" + E),
    ("at the end of the week before August 3, 2023", "2023-07-27", "2023-07-30" + E),
    # words after "the week" that name the period win over now's week
    ("What did I cook at the end of the week, on June 9, 2023?", "2023-06-09", "2023-06-09" + E),
    (
        "In the middle of the week at camp in July 2022, what happened?",
        "2022-07-01",
        "2022-07-31" + E,
    ),
    # other words after it: now's unit
    ("What did I do on the last Friday of the month at work?", "2024-05-31", "2024-05-31" + E),
    ("in the last week of the month at home", "2024-06-24", "2024-06-30" + E),
    ("What have I spent from the start of the year to now?", "2024-01-01", "2024-06-12T15:30"),
    ("What did I buy at the end of the month, on payday?", "2024-05-21", "2024-05-31" + E),
    ("What did I do at the end of the week at the cafe?", "2024-06-06", "2024-06-09" + E),
    ("What did I spend at the end of the month, about $2000?", "2024-05-21", "2024-05-31" + E),
    ("What did I buy at the end of the month for 1500 dollars?", "2024-05-21", "2024-05-31" + E),
    (
        "What did I eat at the end of the month, which was stressful?",
        "2024-05-21",
        "2024-05-31" + E,
    ),
    ("What was the end of the month's total spending?", "2024-05-21", "2024-05-31" + E),
    ("At the start of the week's sprint, who presented?", "2024-06-10", "2024-06-12" + E),
    ("What did I cook at the end of the week, on Jun. 9, 2023?", "2023-06-09", "2023-06-09" + E),
    ("What did I cook at the end of the week, on 6/9/2023?", "2023-06-09", "2023-06-09" + E),
    ("What did I buy at the end of the month, summer 2023?", "2023-06-01", "2023-08-31" + E),
    # the nth weekday or weekend of a period, a day of a month
    ("What did I do on the first Monday of May?", "2024-05-06", "2024-05-06" + E),
    ("on the last Friday of the month", "2024-06-28", "2024-06-28" + E),
    ("the second Tuesday of last month", "2024-05-14", "2024-05-14" + E),
    ("the first weekend of June 2023", "2023-06-03", "2023-06-04" + E),
    ("over the last weekend of May 2023", "2023-05-27", "2023-05-28" + E),
    ("the first Monday of 2023", "2023-01-02", "2023-01-02" + E),
    ("What did I do on the 15th of last month?", "2024-05-15", "2024-05-15" + E),
    ("the 3rd of this month", "2024-06-03", "2024-06-03" + E),
    # a bare day joined to a date is of its month
    ("What did I do on May 3rd and 4th?", "2024-05-03", "2024-05-04" + E),
    ("What did we do on the 3rd and 4th of May?", "2024-05-03", "2024-05-04" + E),
    ("June 5 or 6?", "2024-06-05", "2024-06-06" + E),
    # not a count or a clock time after it, not a day after the date's
    ("I met her on May 3 and 4 days later", "2024-05-03", "2024-05-03" + E),
    ("on May 3 and 5 pm", "2024-05-03", "2024-05-03" + E),
    ("the 5th and 4th of May", "2024-05-04", "2024-05-04" + E),
    # "the year" with its year is that year
    ("at the end of the year 2023?", "2023-09-01", "2023-12-31" + E),
    ("the beginning of the year '22", "2022-01-01", "2022-04-30" + E),
    ("the first three days of the year 2023", "2023-01-01", "2023-01-03" + E),
    # words after "the month" that name the period win over now's month
    ("What bills did I pay at the end of the month in March 2023?", "2023-03-01", "2023-03-31" + E),
    ("At the end of the month, in May 2023, I moved", "2023-05-01", "2023-05-31" + E),
    ("at the end of the month last year", "2023-01-01", "2023-12-31" + E),
    # a part with "in" before it still joins a second with its year
    (
        "What did I do in the first two weeks of March and April 2023?",
        "2023-03-01",
        "2023-04-30" + E,
    ),
    # a count joined to a day word is no day
    ("What were my top 3 and yesterday's tasks?", "2024-06-11", "2024-06-11" + E),
    # a part "in" a period is that part of it
    ("What did I do early in 2023?", "2023-01-01", "2023-04-30" + E),
    ("late in the summer of 2023", "2023-08-01", "2023-08-31" + E),
    ("What happened early on in the month?", "2024-06-01", "2024-06-10" + E),
    ("What happened late in May?", "2024-05-21", "2024-05-31" + E),
    ("What did I read early in 2023?", "2023-01-01", "2023-04-30" + E),
    ("Who did I meet late in 2022?", "2022-09-01", "2022-12-31" + E),
    ("Where was I late in 2022?", "2022-09-01", "2022-12-31" + E),
    ("What was the weather like early in the week?", "2024-06-10", "2024-06-12" + E),
    ("I was tired and early in 2023 I moved.", "2023-01-01", "2023-04-30" + E),
    ("late in May, June 3rd was the deadline", "2024-05-21", "2024-05-31" + E),
    # after a verb of the clock or a deadline, early and late are of it: the whole period
    ("Did I work late in March?", "2024-03-01", "2024-03-31" + E),
    ("Did I pay my rent late in February?", "2024-02-01", "2024-02-29" + E),
    ("I was late in June with the taxes.", "2024-06-01", "2024-06-30" + E),
    ("I went to bed too late in March", "2024-03-01", "2024-03-31" + E),
    ("Was I late in June with the taxes?", "2024-06-01", "2024-06-30" + E),
    ("Did I submit my report late in June?", "2024-06-01", "2024-06-30" + E),
    ("Were the trains late in May?", "2024-05-01", "2024-05-31" + E),
    ("I stayed up way too late in May", "2024-05-01", "2024-05-31" + E),
    # the year first, then the part
    ("What happened late in the summer in 2022?", "2022-08-01", "2022-08-31" + E),
    # a word ending in "late" is no part
    ("I ate chocolate in March", "2024-03-01", "2024-03-31" + E),
    # one of two joined names is not read alone
    ("What did I do early in January and February?", "2024-01-01", "2024-02-29" + E),
    # a name "in" a year is of that year
    ("What did I do in the summer in 2023?", "2023-06-01", "2023-08-31" + E),
    ("in March in 2023", "2023-03-01", "2023-03-31" + E),
    ("What did I do on May 5 in 2023?", "2023-05-05", "2023-05-05" + E),
    ("Christmas Eve in 2022", "2022-12-24", "2022-12-24" + E),
    # not a name: a person, a march, a fall
    ("When did I go to the Women's March in 2017?", "2017-01-01", "2017-12-31" + E),
    ("When did I meet Jan in 2023?", "2023-01-01", "2023-12-31" + E),
    ("I met Tom and Summer in 2023.", "2023-01-01", "2023-12-31" + E),
    ("What did I do in Spring and Summer in 2023?", "2023-03-01", "2023-08-31" + E),
    ("How did I recover from the fall in 2022?", "2022-01-01", "2022-12-31" + E),
    ("between the spring in 2022 and the fall in 2022", "2022-03-01", "2022-11-30" + E),
    ("What did I do before Christmas in 2022?", None, "2022-12-23" + E),
    ("the week of May 5 in 2023", "2023-05-01", "2023-05-07" + E),
    # "midweek", "mid-month" ending their clause are the middle of the unit
    ("What did Ana do midweek?", "2024-06-11", "2024-06-13" + E),
    ("Midweek last week, I ran a 10k", "2024-06-04", "2024-06-06" + E),
    ("what did I pay mid-month?", "2024-06-11", "2024-06-20" + E),
    ("What did I do mid-week, on Wednesday?", "2024-06-12", "2024-06-12" + E),
    ("What did I do midweek, and how did I feel?", "2024-06-11", "2024-06-13" + E),
    # a range ends where its end does, also inside its start's span
    ("from the beginning of the month through June 5", "2024-06-01", "2024-06-05" + E),
    ("between the start of the year and March 2024", "2024-01-01", "2024-03-31" + E),
    # an amount is no year; a plural subject after a year leaves it one
    ("In 2000 words or less, what did I do last week?", "2024-06-03", "2024-06-09" + E),
    ("In 2020 people stayed home", "2020-01-01", "2020-12-31" + E),
    ("In March 2023 users complained", "2023-03-01", "2023-03-31" + E),
    (
        "What did I buy at the end of the month, with a budget of 2000 dollars?",
        "2024-05-21",
        "2024-05-31" + E,
    ),
]


@pytest.mark.parametrize(("text", "start", "end"), PARTS, ids=[c[0] for c in PARTS])
def test_the_edge_units_of_a_period(text: str, start: str | None, end: str | None) -> None:
    assert_exact_window(text, start, end)


@pytest.mark.parametrize(
    "text",
    [
        "the first several days of June",  # no one count
        "the first 40 days of June",  # more than June holds
        "the first two weeks of the project",  # no period
        "What did we decide at the end of the week-long retreat?",
        "What did I do at the end of the year that I graduated?",
        "What did I do at the end of the month's first week?",
        # "midweek" before a noun names a thing; "early in" a thing is no time
        "How far was my midweek run?",
        "Who scored early in the game?",
        "Did I eat late in the evening?",
    ],
)
def test_no_edge_units_without_one_span_that_holds_them(text: str) -> None:
    assert window(text) is None


def test_a_range_up_to_today_in_its_first_days_ends_today() -> None:
    # asked on January 6, "the beginning of the year" alone runs to April
    now = datetime(2025, 1, 6, 12, tzinfo=UTC)
    for text in (
        "What did I do from the beginning of the year through today?",
        "between the start of the year and today",
    ):
        found = extract_time_window(text, now)
        assert found is not None, text
        assert (found.start, found.end) == (
            datetime(2025, 1, 1, tzinfo=UTC),
            datetime(2025, 1, 6, 23, 59, 59, 999999, tzinfo=UTC),
        ), text


def test_months_of_a_day_leave_the_day() -> None:
    assert_exact_window("the last two months of June 5", "2024-06-05", "2024-06-05" + E)


@pytest.mark.parametrize(
    "text",
    [
        "the end of the month",
        "the first week of the year",
        "since the start of the year",
        "the first 3 days of the week",
        "the end of the week",
    ],
)
def test_the_unit_holding_now_past_the_calendar_is_no_time(text: str) -> None:
    # the unit holding the last moment datetime holds has no next one to end before
    last = datetime(9999, 12, 31, 23, 59, tzinfo=UTC)
    assert extract_time_window(text, last) is None


def test_no_day_joins_a_count() -> None:
    assert window("Did I run 5 or Monday?") is None
    assert window("the end of the month after the wedding") is None


@pytest.mark.parametrize("text", ["the fifth Monday of May", "the first Monday of the project"])
def test_no_nth_weekday_without_a_period_that_holds_it(text: str) -> None:
    assert window(text) is None


def test_a_day_past_the_months_end_leaves_the_month() -> None:
    # June has 30 days: the month, not the 1st of July
    july = datetime(2024, 7, 10, tzinfo=UTC)
    expected = (
        datetime(2024, 6, 1, tzinfo=UTC),
        datetime(2024, 6, 30, 23, 59, 59, 999999, tzinfo=UTC),
    )
    assert window("on the 31st of last month", july) == expected


def test_a_part_of_the_first_unit_of_the_calendar_stays_in_it() -> None:
    # no unit before the first: the part not begun is of now's, not an error or no time
    first_days = datetime(1, 1, 3, tzinfo=UTC)
    found = extract_time_window("What did I do at the end of the month?", first_days)
    assert found is not None
    assert (found.start, found.end) == (
        datetime(1, 1, 21, tzinfo=UTC),
        datetime(1, 1, 31, 23, 59, 59, 999999, tzinfo=UTC),
    )

"""The time-scoped questions the question-family benchmark (:mod:`benchmarks.families`)
asks of a conversation, generated from its memories' dates, with the period each is scored
on."""

from __future__ import annotations

import calendar
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from hindsight_tools.evaluation import BankData

# A period with fewer memories than this is too thin to ask about: a handful of turns can't
# fill a top 10, and its floor would be noise.
MIN_PERIOD_MEMORIES = 10
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "winter": 12}
SHAPES = (
    "month",
    "season",
    "month range",
    "joined months",
    "relative",
    "month of last year",
    "week before",
    "told on a day",
)
# Two months joined without "between", each way a question may join them
JOINERS = ("{a} and {b}", "{a}-{b}", "{a} or {b}")
# BEAM's speakers: its questions are the user's own, about their chats with an assistant.
CHAT_SPEAKERS = {"user", "assistant"}


@dataclass(frozen=True)
class Period:
    """``[start, end)`` in whole days."""

    start: date
    end: date

    def holds(self, day: date) -> bool:
        return self.start <= day < self.end


@dataclass(frozen=True)
class TimeQuestion:
    bank: str
    shape: str
    question: str
    query_time: datetime
    period: Period
    in_window: frozenset[str]


def _first_of(year: int, month: int, later: int = 0) -> date:
    """The first day of the month ``later`` months after ``year``-``month``."""
    index = year * 12 + (month - 1) + later
    return date(index // 12, index % 12 + 1, 1)


def _month(year: int, month: int, count: int = 1) -> Period:
    return Period(_first_of(year, month), _first_of(year, month, count))


def _name(month: int) -> str:
    return calendar.month_name[month]


def _item_day(item: Mapping[str, Any]) -> date | None:
    value = item.get("occurred_start")
    if value is None:
        return None
    moment = datetime.fromisoformat(str(value))
    return moment.date()


def dated_memories(bank: BankData) -> list[tuple[str, date, str | None]]:
    """(dia_id, day, speaker) of every dated memory with a dia_id."""
    rows = []
    for item in bank.items:
        metadata = item.get("metadata") or {}
        dia_id, day = metadata.get("dia_id"), _item_day(item)
        if isinstance(dia_id, str) and day is not None:
            speaker = metadata.get("speaker")
            rows.append((dia_id, day, speaker if isinstance(speaker, str) else None))
    return rows


def _askers(speakers: set[str]) -> list[str]:
    """Who the questions are about: both people of a conversation, taking turns; in a chat
    between a user and an assistant, the user asking about themself ("What did I …")."""
    if speakers and speakers <= CHAT_SPEAKERS:
        return ["I"]
    return sorted(speakers) or ["they"]


def time_questions(bank: BankData, asked_at: datetime) -> list[TimeQuestion]:
    """The :data:`SHAPES` for every period of ``bank`` holding at least
    :data:`MIN_PERIOD_MEMORIES` memories and not all of them (a period holding the whole
    bank asks nothing of time: any order is in it). Absolute periods are asked at
    ``asked_at`` (the conversation's own question time); "last month" on the 15th of the
    month after the period, "in March of last year" on the 15th of the same month a year
    on. "The week before" a day is the Monday-Sunday week before that day's, asked of the
    Thursday after the week with the memories; "last week, as mentioned on" that Thursday
    is that week and the days up to the Thursday, asked at ``asked_at``, long after, so
    only the day it was told says which week it is."""
    dated = dated_memories(bank)
    speakers = _askers({s for _, _, s in dated if s is not None})
    months = sorted({(d.year, d.month) for _, d, _ in dated})
    questions: list[TimeQuestion] = []

    def add(shape: str, text: str, period: Period, when: datetime) -> None:
        inside = frozenset(i for i, d, _ in dated if period.holds(d))
        if MIN_PERIOD_MEMORIES <= len(inside) < len(dated):
            questions.append(TimeQuestion(bank.bank, shape, text, when, period, inside))

    for n, (year, month) in enumerate(months):
        who = speakers[n % len(speakers)]
        add(
            "month",
            f"What did {who} talk about in {_name(month)} {year}?",
            _month(year, month),
            asked_at,
        )
        after = _first_of(year, month, 1)
        relative_at = datetime(after.year, after.month, 15, 12, tzinfo=UTC)
        add("relative", f"What did {who} do last month?", _month(year, month), relative_at)
        if n % 2 == 1:  # every other month, so it weighs no more than the other shapes
            a_year_on = datetime(year + 1, month, 15, 12, tzinfo=UTC)
            text = f"What did {who} talk about in {_name(month)} of last year?"
            add("month of last year", text, _month(year, month), a_year_on)
        if n % 3 == 0:  # ranges start every third month, so they overlap little
            last = _first_of(year, month, 2)
            text = (
                f"What did {who} do between {_name(month)} and {_name(last.month)} {year}?"
                if last.year == year
                else f"What did {who} do between {_name(month)} {year} and "
                f"{_name(last.month)} {last.year}?"
            )
            add("month range", text, _month(year, month, 3), asked_at)
        following = _first_of(year, month, 1)
        if n % 3 == 1 and (following.year, following.month) in months:
            # on the months after those ranges start on, so the two shapes overlap little;
            # both months must hold memories
            a, b = _name(month), f"{_name(following.month)} {following.year}"
            if following.year != year:
                a = f"{a} {year}"
            joiner = JOINERS[n // 3 % len(JOINERS)]
            text = f"What did {who} do in {joiner.format(a=a, b=b)}?"
            add("joined months", text, _month(year, month, 2), asked_at)
    weeks = sorted({d - timedelta(days=d.weekday()) for _, d, _ in dated})
    for n, monday in enumerate(weeks):
        thursday = monday + timedelta(days=10)
        add(
            "week before",
            f"What did {speakers[n % len(speakers)]} do the week before "
            f"{_name(thursday.month)} {thursday.day}, {thursday.year}?",
            Period(monday, monday + timedelta(days=7)),
            asked_at,
        )
        if n % 2 == 0:  # every other week, so it weighs no more than the other shapes
            add(
                "told on a day",
                f"What did {speakers[n % len(speakers)]} talk about last week, as mentioned "
                f"on {_name(thursday.month)} {thursday.day}, {thursday.year}?",
                Period(monday, thursday + timedelta(days=1)),
                asked_at,
            )
    for year, season in sorted({(_season_year(y, m), _season_of(m)) for y, m in months}):
        add(
            "season",
            f"What happened in the {season} of {year}?",
            _month(year, SEASONS[season], 3),
            asked_at,
        )
    return questions


def _season_of(month: int) -> str:
    """Meteorological, northern hemisphere; January and February are the winter that
    began the December before."""
    for name, first in SEASONS.items():
        if (month - first) % 12 < 3:
            return name
    raise AssertionError(month)


def _season_year(year: int, month: int) -> int:
    """The year a season is named by: "winter 2022" runs December 2022 to February 2023."""
    return year - 1 if month < 3 else year

"""The time window a query names (docs/design.md, The four arms: temporal).

``extract_time_window(text, now)`` finds the time expression in a query and resolves it
against ``now`` into a :class:`TimeWindow` with the span the words mean: a month is the
whole month, a season its three months, a year the whole year, and only a concrete date
("June 5, 2022", parsed by ``dateparser``) is a single day. Pure: no I/O, deterministic.

Conventions
-----------
* Datetimes are timezone-aware UTC. A naive ``now`` is taken to be UTC, an aware one is
  converted; calendar arithmetic happens in UTC.
* ``end`` is inclusive, the span's last microsecond: June 2022 is
  2022-06-01T00:00:00Z .. 2022-06-30T23:59:59.999999Z. An open side is ``None``.
* Weeks run Monday-Sunday; a weekend is that week's Saturday and Sunday.
* Seasons are meteorological, northern hemisphere: spring Mar-May, summer Jun-Aug,
  autumn/fall Sep-Nov, winter Dec-Feb; "winter 2022" is Dec 2022 - Feb 2023.
* A bare name ("in March", "in the summer", "on Friday", "Q3", "the 90s", "June 5") is
  its latest occurrence that has begun, the current one if we are in it.
  "last X" is the latest X that has fully ended: on 2024-06-12 "last spring" is Mar-May
  2024, "last summer" Jun-Aug 2023, "last March" March 2024, "last Tuesday" the Tuesday
  before today. "this X" is the X holding now, else the nearest one (for a weekday: that
  day of the current week). "next X" is the first X that starts after now.
* "last/this/next week|weekend|month|quarter|year" are calendar units next to now's.
  "the last/past N units", "in the past month" are rolling: now - N units .. now.
* "N units ago" is the whole calendar unit holding now - N units: "3 days ago" that day,
  "3 weeks ago" that Monday-Sunday week, "2 months ago" that month, "2 years ago" that
  calendar year. "a couple" is 2, "a few" 3, "several" 2 to 4 units back (4 when rolling).
  A range of counts ("one or two weeks ago", "2-3 days ago", "a month or two ago", "a
  week or so ago") runs from the most units back to the fewest.
* "two Fridays ago" is the Friday a week before last Friday; "two weekends ago" the weekend
  of the week two weeks ago; "the last two weekends" both weekends before this week, "the
  past three Fridays" the three before today (:mod:`hindsight_tools.query.weekly`).
* "recently", "lately": the last 30 days up to now, marked ``vague``.
* "this time last year" is that day two weeks either side, "this time last month" three
  days either side, "this time last week" and "a year ago today" the day; after "since",
  "until", "between", … it is the day ("since this time last year").
* "the week/weekend/month/year before last": two calendar units back; "after next" two
  ahead. "The summer/March/Monday/Christmas before last" is the one before "last X", "two
  summers ago", "three Christmases ago", "two Junes ago" the one so many before the
  latest.
* "the U after/before X", "N Us after/before X" (U a day, week, weekend, month or year)
  are calendar units counted from the one X ends or starts in: "the week before August 3,
  2023" is July 24-30 (:mod:`hindsight_tools.query.offsets`); a weekday so counted is that
  one day ("(the) Sunday before October 25, 2022" is October 23, "the first Sunday after"
  it October 30). A possessive's time ("yesterday's party") counts only a day from one
  calendar day ("the day after yesterday's party" is today). A break within a season
  ("spring break", "winter recess", "the fall 2023 break") has edges that are not the
  season's: nothing is counted from it ("the week before spring break", "on Sunday after
  spring break"), nor opened after or until it, but a year named with it after "after" is
  read ("after spring break in 2023" is 2023; not a winter break's, which ends in the
  next year); "since" or "before" it open at the season's start, near the term's. A term
  the length of its season keeps the season's edges ("after the fall 2022 semester" is
  from December 2022, "after summer camp" from September). A holiday's break is counted
  from the holiday ("the week after Christmas break"). These wordings, "early in X",
  "midweek" and a name "in" a year are made plain first
  (:mod:`hindsight_tools.query.wording`).
* A name in a relative unit is that name in that unit: "March of last year", "last year
  in March", "in the summer two years ago", "Christmas of the year before last", "on
  Monday of last week", "Tuesday last week", "Friday two weeks ago" (pinned to a year or a
  date first: :mod:`hindsight_tools.query.rewrites`). "Several years ago" has no one year,
  "the last/past year" is rolling, and which winter "the winter of last year" is depends on
  the speaker; none pins a name.
* A bare name with "usually", "typically" or "habitually" in its clause is no time ("What
  do I usually do in summer?"): :mod:`hindsight_tools.query.habits`.
* Holidays (their days: :mod:`hindsight_tools.query.holidays`) named alone need a time word
  before them ("over Christmas"; "for Christmas", "in the new year" are no time) and are
  ``vague``; with a year or last/this/next ("Christmas 2022") they are one holiday. "The
  holidays" ("the holiday season"; not "my last holidays", a vacation) are 24 December -
  1 January.
* A two-digit year after an apostrophe ("summer of '23", "May '19") is the latest such
  year up to ten years after now; "2023 summer" is summer 2023.
* Parts of a day: morning 06-12, afternoon 12-18, evening 18-24, night 18-06 the next
  morning ("last night" = yesterday 18:00 .. today 05:59:59.999999).
* "early/mid/late X" take X's thirds (a year Jan-Apr / May-Aug / Sep-Dec, a month days
  1-10 / 11-20 / 21-end, a decade 0-3 / 4-6 / 7-9); "the beginning/middle/end of X" are
  the same thirds, and so are "early/late in X" ("early in 2023", "late in the summer");
  "midweek" and "mid-month" ending their clause are the middle of now's week and month
  ("my midweek run" is no time); after a word of the clock or a deadline ("work", "stay
  up", "pay", "was", "report") and in a question whether something was ("Was my flight
  late in July?"), early and late are of it: "I worked late in March" is March. "The
  first/second half of X" are its halves. A Monday-Sunday week's thirds are
  Monday-Wednesday / Tuesday-Thursday / Thursday-Sunday, its halves Monday-Wednesday and
  Thursday-Sunday. "The first/…/fourth/last Monday (or weekend) of X" is that day of it
  ("the last Friday of the month"), "the 15th of last month" that day. "The
  first/second/third/fourth week of" a month, season, quarter or year are its days 1-7 /
  8-14 / 15-21 / 22-28, "the last week of" it its last seven days; "the week of" a day is
  that day's Monday-Sunday week. "The first/last N days, weeks or months of" a period are
  counted from its start or end, weeks as seven days ("the first two weeks of March" is
  March 1-14, "the first few days of June" June 1-3), when they fit in it. "The week",
  "the month" and "the year" after a part ("the beginning of the month", "the end of the
  week?") are the ones holding now, even when they are not over (the latest before that
  has the part when it has not begun, is not aimed at, "for the end of the month", and a
  question asks of the past: "What did I do at the end of the week?" asked on a Monday
  is last week's Thursday to Sunday, :mod:`hindsight_tools.query.tense`), unless
  the words after them name the period ("the week when …", "the week-long retreat", "the
  year that …", or a date with its year later in the clause: "the end of the week, on
  June 9, 2023"); "the end of the year 2023" is that year's. A fortnight is two weeks
  ("the last fortnight", "a fortnight ago").
* "2023-06" (ISO 8601's year-month), "2023/06" and "06/2023" are that month; "H1 2023",
  "2023 H2" a half year, "H1 and H2 2023" both (a half without its year is no time: "an
  H1 visa", "after H1, use H2").
* "between X and Y", "from X to Y": X's start .. Y's end, also when Y lies inside X ("from
  the beginning of the year through today" asked on January 6 ends that day) or starts
  before it ("from now until the end of the year" starts now); an X without a year is
  placed just before Y ends ("between March and May 2023"), and a bare Y that ended
  before an X placed by its year or holding now or ahead ("now", "today", "this month")
  is its next occurrence ("from today until Christmas" asked in June ends with this
  Christmas, not last year's). Joined without
  "between" ("June-July 2023", "spring and summer 2023", "January or February 2024", "Q1
  and Q2 2023") the same, when Y names its year, or when X and Y are names of one kind
  without a year after a time word ("in January and February", "on Monday and Tuesday",
  "in spring and summer", "in Q1 and Q2"; joined by "and"/"or" in whichever order is
  nearer: "on Friday or Thursday" asked on a Wednesday is the two days just gone; after a
  first with its year, "in January 2023 and March", the second is the first such after it;
  after "last", "last summer and fall", the first as "last" reads it and the second the
  first such from its start that began before the day of asking, else the pair before:
  "last Monday through Friday" asked on a Tuesday is the week before; with "and"/"or"
  either order, the one with more names as "last" alone reads them or under way, then the
  one of fewer months, then as written). A year alone after "and"/"or" takes the first's
  name ("the spring of 2023 and 2024" ends with the spring of 2024). "In June and fall
  asleep" is June, "on Tuesday and Thursday mornings" a habit read as Tuesday, and "May
  and June" alone are people. A bare day before a date is of that date's month, and must
  not come after it ("1-15 May 2023"); "May 1-15, 2023" is those days too, and so are "the
  3rd and 4th of May"; a bare day after a date ("between June 3 and 5", "March 3 and 5,
  2023", "on May 3rd and 4th") is of its month and not before it, when the question goes
  on after it ("and 5 pm", "and 5 friends", "until 11 at night" are no day). "The weekend
  of" a day is that week's Saturday and Sunday. "since X": X's start, open end; "after X":
  right after X's end, open end; "before X": open start, right before X's start; "until
  X": open start, X's end.
* When a query names several times the leftmost expression wins (the longest if two start
  at the same place, then the rule table's order); a vague one ("recently") only when
  nothing else is named: "What did Joanna recently watch on February 7, 2022?" is that day.
* "as mentioned/said/told/noted … on X", X with its year, says when something was told:
  the question's other time words are read from X's start, and the window spans their
  period and X ("last week, as mentioned on November 6, 2023" is October 30 - November
  6); X alone when it names nothing else or only a vague word
  (:mod:`hindsight_tools.query.told`).
* A name "in" a year is of that year ("in the summer in 2023", "on May 5 in 2023"), and a
  year after a term within a season is the season's ("spring break 2023" is spring 2023).
* A number before a unit is an amount, not a year: "in 2000 words or less", "a budget of
  2000 dollars" (not before a plural subject: "in 2020 people stayed home").
* Month and day names that are also names or words count only in a date context: "May"
  and "June" alone (people), "the march", "I may go", "on Fridays" are no time; "in May",
  "May 2023", "May 7", "last May", "since May", "on Friday" are.

Never raises on a ``str``; only its first ``MAX_QUERY_CHARS`` characters are read.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime

from hindsight_tools.query.expressions import (
    MAX_TRIES_PER_RULE,
    PART,
    Finder,
    Found,
    attempt,
    open_window,
    parse_at,
    part_at,
)
from hindsight_tools.query.habits import names_a_habit
from hindsight_tools.query.offsets import OFFSET
from hindsight_tools.query.pairs import find_named_pair
from hindsight_tools.query.ranges import find_joined, find_range
from hindsight_tools.query.rewrites import pin_relative_times, spell_out
from hindsight_tools.query.spans import FLAGS
from hindsight_tools.query.time_rules import (
    RULES,
    Rule,
)
from hindsight_tools.query.told import told_on
from hindsight_tools.query.window import TimeWindow

__all__ = ["MAX_QUERY_CHARS", "TimeWindow", "extract_time_window"]

MAX_QUERY_CHARS = 2000
# "What did John recently get promoted to?" asks for the latest, which recency already
# favours, not for what lies inside the last 30 days: on the LoCoMo dev questions such
# words often reach back months, and ranking by their span made recall@10 worse on 12 of
# the 13 "recently" questions whose recall@10 it changed.
# A holiday named alone is as often a habit as a date: "What does Tim watch during
# Thanksgiving?" asks about every Thanksgiving, and its answer was said in August. With a
# year or "last"/"this"/"next" it is one holiday, and ranks.
VAGUE_RULES = frozenset({"recently", "holiday"})


def extract_time_window(text: str, now: datetime) -> TimeWindow | None:
    """The time window a query refers to, resolved against `now`; None when it names no time."""
    if not isinstance(text, str) or not isinstance(now, datetime):
        return None
    try:
        now = now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)
    except OverflowError:  # a time in another zone whose UTC is past the calendar's ends
        return None
    spelled = spell_out(text[:MAX_QUERY_CHARS], now)
    told = told_on(spelled, now)
    if told is None:
        return _first(pin_relative_times(spelled, now), now)
    at, stop, day = told
    rest = pin_relative_times(spelled[:at] + " " * (stop - at) + spelled[stop:], day.start)
    named = _first(rest, day.start)
    if named is None or named.vague:  # "recently", as told that day, is that day
        return TimeWindow(day.start, day.end)
    return TimeWindow(
        None if named.start is None else min(named.start, day.start),
        None if named.end is None else max(named.end, day.end),
    )


def _first(query: str, now: datetime) -> TimeWindow | None:
    """The window of the query's first expression: a vague one only when nothing else is
    named ("recently in May 2022" is May 2022)."""
    best: tuple[bool, int, int, int, TimeWindow] | None = None
    for rank, finder in enumerate(_FINDERS):
        found = _not_a_habit(finder, query, now)
        if found is not None:
            position, length, window = found
            key = (window.vague, position, -length, rank, window)
            if best is None or key[:4] < best[:4]:
                best = key
    return None if best is None else best[4]


def _not_a_habit(finder: Finder, query: str, now: datetime) -> Found | None:
    """The finder's first expression that doesn't name a habit: each one that does is
    blanked out, same length, and the finder asked again."""
    text = query
    for _ in range(MAX_TRIES_PER_RULE):
        found = finder(text, now)
        if found is None or not names_a_habit(query, found[0], found[0] + found[1]):
            return found
        text = text[: found[0]] + "_" * found[1] + text[found[0] + found[1] :]
    return None


# --- finders: each returns the first (position, length, window) it sees in a query ----


def _simple(r: Rule) -> Finder:
    def find(text: str, now: datetime) -> Found | None:
        for m in itertools.islice(r.strict.finditer(text), MAX_TRIES_PER_RULE):
            span = attempt(r.handle, m, now)
            if span is not None:
                window = TimeWindow(*span, vague=r.name in VAGUE_RULES)
                return m.start("core"), m.end() - m.start("core"), window
        return None

    return find


def _parts(text: str, now: datetime) -> Found | None:
    for m in itertools.islice(PART.finditer(text), MAX_TRIES_PER_RULE):
        found = part_at(text, m.start(), now, None)
        if found is not None:
            return m.start(), found[1] - m.start(), TimeWindow(*found[0])
    return None


_OPEN = re.compile(r"\b(?P<kw>(?:ever )?since|after|before|until|till|up until|prior to) ", FLAGS)


def _open_ended(text: str, now: datetime) -> Found | None:
    for m in itertools.islice(_OPEN.finditer(text), MAX_TRIES_PER_RULE):
        found = parse_at(text, m.end(), now)
        if found is None:
            continue
        (start, end), stop = found
        word = "before" if m["kw"].lower() == "prior to" else m["kw"].lower().split()[-1]
        window = open_window(word, start, end)
        if window is not None:
            return m.start(), stop - m.start(), window
    return None


# A word every counted period has: most texts have none, and OFFSET's counts are costly
_COUNTED_FROM = re.compile(r" (?:after|before|following|prior to) ", FLAGS)


def _counted(text: str, now: datetime) -> Found | None:
    if _COUNTED_FROM.search(text) is None:
        return None
    for m in itertools.islice(OFFSET.finditer(text), MAX_TRIES_PER_RULE):
        found = parse_at(text, m.start(), now)
        # past the words before X, or it was something shorter: "Monday" of "Monday after work"
        if found is not None and found[1] > m.end():
            return m.start(), found[1] - m.start(), TimeWindow(*found[0])
    return None


_FINDERS: tuple[Finder, ...] = (
    find_range,
    _counted,
    _open_ended,
    _parts,
    find_joined,
    find_named_pair,
    *(_simple(r) for r in RULES),
)

"""The period a question names by an event, dated by the memory that best matches it.

"Why did Priya leave Lumen Health?" names no date, yet it asks about a period: what came
before she left. The best match for the question is, most often, the memory of the event
itself ("Priya left Lumen Health; Daniel organised her farewell dinner", 2024-01-19); its
date dates the event, and the period on the asked side of it
(:mod:`hindsight_tools.query.events`) ranks like a period a question names by its dates,
with its own, gentler weight (``HINDSIGHT_API_EVENT_WINDOW_ALPHA``), since the event was
found, not read. The offer she accepted two months before and the message that led to
it then come ahead of her first years at the firm, which match the question's words
better.

The period runs ``HINDSIGHT_API_EVENT_WINDOW_DAYS`` from the event's day (in UTC), which
it includes: a memory that tells the event and its cause at once ("Because of the
burnout, Tomas resigned") is of that day.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from hindsight_tools.query.events import EventRelation
from hindsight_tools.query.spans import TICK
from hindsight_tools.query.window import TimeWindow

__all__ = ["ANCHOR_CANDIDATES", "anchored_window", "event_anchor"]

# The event is looked for among this many of the best candidates: a question's best
# matches that have no date say nothing of when it happened, but one ranked further down
# is no longer the event the question names.
ANCHOR_CANDIDATES = 3


def event_anchor(ranked: Sequence[tuple[str, datetime | None]]) -> tuple[str, datetime] | None:
    """The first dated of the first :data:`ANCHOR_CANDIDATES` of ``ranked`` (id, date),
    best first.

    The best match, not the far edge of the best few: taking the earliest of them for
    "after" and the latest for a cause or "before", so that the period never ranks one of
    them down, lost recall on the LoCoMo dev conversations it was chosen on and on both
    scripted personas (docs/decisions/2026-12-07-periods-named-by-an-event.md). A memory
    with a span is dated by its start, whichever the side: "What did she do after Lumen?"
    may match her years at the firm ("worked at Lumen from 2022 to 2024") for her joining
    as well as for her leaving, and only the wording could tell."""
    for memory_id, date in ranked[:ANCHOR_CANDIDATES]:
        if date is not None:
            return memory_id, date
    return None


def anchored_window(relation: EventRelation, anchor: datetime, days: float) -> TimeWindow:
    """The ``days`` before (a cause, or before) or after the UTC day of ``anchor``, that day
    included; a side that would pass the calendar's first or last day is left open."""
    moment = anchor.replace(tzinfo=UTC) if anchor.tzinfo is None else anchor.astimezone(UTC)
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    span = timedelta(days=days)
    try:
        next_day = day + timedelta(days=1)
    except OverflowError:
        next_day = None
    if relation == "after":
        return TimeWindow(day, _shifted(next_day, span))
    return TimeWindow(_shifted(day, -span), None if next_day is None else next_day - TICK)


def _shifted(moment: datetime | None, span: timedelta) -> datetime | None:
    """``moment + span``, less a tick when going forward (an inclusive end), or None past
    the calendar's edge."""
    if moment is None:
        return None
    try:
        shifted = moment + span
    except OverflowError:
        return None
    return shifted - TICK if span > timedelta(0) else shifted

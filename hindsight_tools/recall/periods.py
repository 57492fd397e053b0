"""The periods candidates' own words name, for a query that names one.

A memory is dated when it was said or happened, but its words often place what it tells
elsewhere: "last year we went camping" said in July 2023, "I started a pottery class last
month". When a question names a period, such a memory belongs to the period its words
name as much as to its date (:func:`hindsight_tools.recall.scoring.temporal_signal` takes
the nearer of the two).

The parser costs about 0.4 ms a text, too much for every candidate of a recall, so only
the :data:`NAMED_PERIOD_CANDIDATES` best by the query's wording (late interaction, else
fused order) are read, and only those whose date lies outside the window: a memory must
already match the question for what its words say about time to lift it, and the period's
own memories come in by their dates. On the LoCoMo dev conversations (114 of 760 questions
name a period, most of them resolved against a memory's date, not the question's) a replay
of the final stage took recall@10, window at full weight, from 0.763 to 0.774 on the three
conversations it was chosen on and from 0.741 to 0.748 on the other two.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from hindsight_tools.query.time_window import TimeWindow, extract_time_window

NAMED_PERIOD_CANDIDATES = 30


def named_periods(
    ranked: Sequence[tuple[str, str, datetime | None]],
    inside: Mapping[str, bool],
    limit: int = NAMED_PERIOD_CANDIDATES,
) -> dict[str, TimeWindow]:
    """``{id: period}`` for the first ``limit`` of ``ranked`` (id, text, date), best first,
    that are dated, not ``inside`` the window by their date, and whose text names a time."""
    periods: dict[str, TimeWindow] = {}
    for memory_id, text, date in ranked[:limit]:
        if date is None or inside.get(memory_id, False):
            continue
        period = extract_time_window(text, date)
        if period is not None:
            periods[memory_id] = period
    return periods

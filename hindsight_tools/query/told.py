"""The day a question says something was told ("What was Tim's writing issue last week, as
he mentioned on November 6, 2023?"): the conventions are
:mod:`hindsight_tools.query.time_window`'s.

Such a question pins two times: when it was told, and the period the teller's own words
name ("last week", "last month"), which counts from that day, not from now. A memory of it
may be dated by either (a conversation's message by the day it was said, a journal's entry
by the event), so the window spans both: the period read from the day it was told and that
day. It is the day alone when nothing else is named, or only a vague word ("recently", a
holiday named alone), which told on a day means that day.

Only "as … mentioned / said / told / noted … on|in X" with X naming its year reads as the
telling: "as" marks the aside, so "What did Alice say yesterday about the plan she
mentioned on Monday?" keeps its "yesterday" from now, and "as soon as", "the same as",
"such as" are no aside. X itself is read from now.
"""

from __future__ import annotations

import itertools
import re
from datetime import datetime

from hindsight_tools.query.expressions import MAX_TRIES_PER_RULE, parse_at
from hindsight_tools.query.spans import FLAGS, HAS_YEAR, Span

__all__ = ["told_on"]

_TOLD = re.compile(
    # not "as soon as", "the same as", "such as", "as well as", …
    r"(?<!\bsoon )(?<!\blong )(?<!\bsame )(?<!\bsuch )(?<!\bmuch )(?<!\bwell )(?<!\bjust )"
    r"\bas (?:\w+ )?"
    r"(?:mentioned|said|told|noted|stated|reported|discussed|shared|wrote|written|posted"
    r"|brought up)"
    r"(?: (?:it|this|that|me|us|him|her|them|you))? (?:on|in|during|at) ",
    FLAGS,
)


def told_on(text: str, now: datetime) -> tuple[int, int, Span] | None:
    """Where the words saying when something was told start and end, and that time's span
    (read against ``now``); None when the question has none."""
    for m in itertools.islice(_TOLD.finditer(text), MAX_TRIES_PER_RULE):
        found = parse_at(text, m.end(), now)
        if found is not None and HAS_YEAR.search(text, m.end(), found[1]):
            return m.start(), found[1], found[0]
    return None

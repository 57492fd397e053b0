"""Whether a period a text names is a habit's, not one period: "What do I usually do in
summer?" asks about every summer, not the last one, and "In summer I usually go hiking"
tells of every summer. With a year or a relative word ("What did I usually eat last
summer?") the period is one, and the window stands.

Only words that say "as a rule" count. "Often", "always", "regularly" and "used to" do
not: "Did I often run in March?", "Did I exercise regularly in March?" and "What was used
to fix it in March?" ask about one March.
"""

from __future__ import annotations

import re

from hindsight_tools.query.spans import FLAGS

__all__ = ["names_a_habit"]

_HABITUAL = re.compile(
    r"\b(?:usually|typically|normally|generally|habitually|tend(?:s|ed)? to)\b", FLAGS
)
_ONE_PERIOD = re.compile(
    r"\d|\b(?:last|this|next|past|previous|coming|ago|before|yesterday|today|tonight"
    r"|tomorrow|recent(?:ly)?|lately|now)\b",
    FLAGS,
)
# A habit word counts this many characters either side of the period, within its
# sentence: in a long message, "usually" three paragraphs away is about something else.
HABIT_REACH = 60
_SENTENCE_END = ".!?;"


def names_a_habit(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]``, a period named without a year or a relative word, sits
    in a sentence with a habit word near it."""
    if _ONE_PERIOD.search(text, start, end):
        return False
    before = max(text.rfind(mark, 0, start) for mark in _SENTENCE_END)
    ends = [i for i in (text.find(mark, end) for mark in _SENTENCE_END) if i >= 0]
    after = min(ends, default=len(text))
    near = text[max(before + 1, start - HABIT_REACH) : min(after, end + HABIT_REACH)]
    return _HABITUAL.search(near) is not None

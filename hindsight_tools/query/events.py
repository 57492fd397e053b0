"""Whether a question places what it asks about by an event rather than a date.

"Why did Priya leave Lumen Health?" asks for what came before her leaving; "What did
Melanie do after the road trip?" for what came after the trip; "What did Jean go through
before meeting Maria?" for what came before. None of them names a date, but each names a
period once the event is dated, which only the memories can do: recall dates the event
by its best match and ranks by the period on that side of it
(:mod:`hindsight_tools.recall.anchored`).

Read here, from the words alone:

* a **cause**, in the past tense ("why did / was / were / had / didn't …", "what made /
  led / caused / prompted / inspired / triggered …", "what was the reason / cause"): what
  came before the event. "Why does Nate like turtles?" asks about a state, whose reason
  may be told at any time, and "how come" shows no tense without a parser of verbs, so
  neither is read;
* **after** an event: "after", "following" or "since" followed by a clause ("after the
  accident", "after she left Google", "after receiving advice", "since moving to
  Porto");
* **before** an event: "before", "until", "till", "prior to", "leading up to", "in the
  run-up to" followed by a clause.

A clause opens with an article, a possessive, a pronoun, a gerund or a name; "after work",
"before lunch", "after that" and "after all" open with none of these and stay unread. Not
read either: "since" giving a reason ("Since I'm vegan, …", "Since my wife is vegan, …":
a verb follows within a few words), a habit ("What do I usually do after I wake up?", as
:mod:`hindsight_tools.query.habits` reads one), an aside ("before I forget", "before you
answer"), and a question about the time between two events, their order or both sides
("How many days after …", "Which came first …", "before and after the move"), which
needs more than one side of one event. A word of relation names the event more exactly
than "why", so it wins when both are there ("Why did John join the army after the
hospital visit?" is about what followed the visit). Whether a date is named instead is
the caller's to check first: a calendar period ("after June 5") is read by
:func:`hindsight_tools.query.time_window.extract_time_window`.
"""

from __future__ import annotations

import re
from typing import Literal

from hindsight_tools.query.habits import HABITUAL
from hindsight_tools.query.spans import FLAGS

__all__ = ["EventRelation", "event_relation"]

EventRelation = Literal["cause", "before", "after"]

# Past tense only: a cause comes before what it caused, but "Why does Nate like turtles?"
# asks about a state, and its reason may be told at any time.
_CAUSE = re.compile(
    r"\bwhy(?: (?:did|was|were|had)(?:n[o'’]?t)?\b|['’]d\b)"
    r"|\bwhat (?:made|caused|led|prompted|drove|pushed|motivated|inspired|convinced"
    r"|triggered)\b|\bwhat was the (?:reason|cause)\b",
    FLAGS,
)
# A question about the time between two events, their order or both sides of one needs
# more than one side of one event. Bounded, so that a long text can't make it quadratic.
_INTERVAL = re.compile(
    r"\bhow long\b|\bhow many (?:minutes|hours|days|weeks|months|years|times)\b"
    r"|\bbetween\b|\bwhich\b[^.?!]{0,80}\b(?:first|earlier|later)\b"
    r"|\bin (?:what|which) order\b|\b(?:before|after),? (?:and|or|during)\b",
    FLAGS,
)
# An aside, not an event: "before I forget", "before you answer".
_ASIDE = r"(?:i forget|we (?:start|begin|go on)|you (?:answer|reply|respond|start|begin|go on))\b"
# A clause's first word: an article, possessive, pronoun, gerund or a capitalised name.
# "that" and "this" alone ("after that") are "then", before a noun a determiner.
_DETERMINER = (
    r"(?:the|a|an|my|his|her|their|our|your|its|these|those|(?:that|this)(?=\s+[a-z]{3,}))\b"
)
_PRONOUN = r"(?:i|he|she|they|we|you|it)\b"
_GERUND = r"(?!(?:no|some|any|every)thing\b)[a-z]{2,}ing\b"
_NAME = r"(?-i:[A-Z][A-Za-z][\w'’-]*)"
_TIME_WORDS = (
    r"(?:all|then|now|today|tonight|tomorrow|yesterday|next|last|work|school"
    r"|lunch|dinner|breakfast|midnight|noon|dark|hours|morning|evening|night)\b"
)
# "Since" with a verb a few words on gives a reason: "Since my wife is vegan, …".
_REASON = (
    r"(?:[\w'’-]+\s+){0,3}(?:is|are|was|were|am|has|have|had|does|do|did|can|could|will|would)\b"
)
_AFTER = re.compile(
    rf"\b(?:after|following)\s+(?!{_TIME_WORDS})"
    rf"(?:{_DETERMINER}|{_PRONOUN}|{_GERUND}|{_NAME})"
    rf"|\bsince\s+(?!{_TIME_WORDS}|{_REASON})(?:{_DETERMINER}|{_GERUND}|{_NAME})",
    FLAGS,
)
_BEFORE = re.compile(
    r"\b(?:before|until|till|prior to|leading up to|in the run-up to)\s+"
    rf"(?!{_TIME_WORDS}|{_ASIDE})(?:{_DETERMINER}|{_PRONOUN}|{_GERUND}|{_NAME})",
    FLAGS,
)


def event_relation(text: str) -> EventRelation | None:
    """Which side of an event ``text`` asks about, if it places what it asks by one."""
    if _INTERVAL.search(text) is not None or HABITUAL.search(text) is not None:
        return None
    after = _AFTER.search(text)
    before = _BEFORE.search(text)
    if after is not None or before is not None:
        first = min((m for m in (after, before) if m is not None), key=lambda m: m.start())
        return "after" if first is after else "before"
    if _CAUSE.search(text) is not None:
        return "cause"
    return None

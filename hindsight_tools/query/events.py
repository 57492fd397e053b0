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
* **after** an event: "after" or "since" followed by a clause ("after the accident",
  "after she left Google", "after receiving advice", "since moving to Porto");
* **before** an event: "before", "until", "till", "prior to", "leading up to", "in the
  run-up to" followed by a clause;

and "after" or "before" only in a question with a past form in it ("did", "was", a common
irregular verb, a verb in -ed after its subject): "What should I check before deploying?",
"It crashes after the user clicks submit" and "What does John want to do after his
career?" are about no event that happened.

A clause opens with an article, a possessive, a pronoun, a gerund or a name; "after work",
"before lunch", "after that" and "after all" open with none of these and stay unread. Not
read either: "after" or "before" of a place or an order ("What comes after the header?",
"Who looks after the kids?"), "since" giving a reason (opening a sentence before a
pronoun, "Since I'm vegan, …", or with an auxiliary verb a few words on, "Since my wife
is vegan, …"), "following" (most often "the following …"), a habit ("What do I usually
do after I wake up?", as :mod:`hindsight_tools.query.habits` reads one), an aside
("before I forget", "before answering"), and a question about the time between two
events, their order, both sides of one or a count of times ("How many days after …",
"Which came first …", "before and after the move", "How many times did I …"), which
needs more than one side of one event. A cause wins over a word of relation: "Why did
John join the army after the hospital visit?" asks what led to the joining, which the
visit, before it, is part of. Whether a date is named instead is the caller's to check
first: a calendar period ("after June 5") is read by
:func:`hindsight_tools.query.time_window.extract_time_window`.
"""

from __future__ import annotations

import re
from typing import Literal

from hindsight_tools.query.habits import HABITUAL
from hindsight_tools.query.spans import FLAGS
from hindsight_tools.query.tense import PAST

__all__ = ["EventRelation", "event_relation"]

EventRelation = Literal["cause", "before", "after"]

# Past tense only: a cause comes before what it caused, but "Why does Nate like turtles?"
# asks about a state, and its reason may be told at any time.
_CAUSE = re.compile(
    r"\bwhy(?:\s+(?:did|was|were|had)(?:n[o'’]?t)?\b|['’]d\b)"
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
# An aside, not an event: "before I forget", "before you answer", "before answering".
_ASIDE = (
    r"(?:i forget|we (?:start|begin|continue|go on)"
    r"|you (?:answer|reply|respond|start|begin|continue|go)"
    r"|answering|replying|responding|doing anything|writing)\b"
)
# "after" and "before" of a place or an order, not a time: "What comes after the header?",
# "the character after the colon", "Who looks after the kids?". Present forms only: "What
# came before the breakup?" and "Where did we go after the concert?" ask about a time.
_PLACE = re.compile(
    r"\b(?:comes?|goes|put|placed|looks?|looked|looking|character|line|word|column|field"
    r"|row|item)\s*$",
    FLAGS,
)
# A clause's first word: an article, possessive, pronoun, gerund or a capitalised name.
# "that" and "this" alone ("after that", "after that and …") are "then"; before a noun,
# a determiner.
_DETERMINER = (
    r"(?:the|a|an|my|his|her|their|our|your|its|these|those"
    r"|(?:that|this)(?=\s+(?!(?:and|but|with|for|was|is|the|when|what|why|how)\b|\w+ed\b)"
    r"[a-z]{3,}))\b"
)
_PRONOUN = r"(?:i|he|she|they|we|you|it)\b"
_GERUND = (
    r"(?!(?:(?:no|some|any|every)?thing|string|spring|morning|evening|ceiling|during)\b)"
    r"[a-z]{2,}ing\b"
)
_NAME = r"(?-i:[A-Z][A-Za-z][\w'’-]*)"
_TIME_WORDS = (
    r"(?:all|then|now|today|tonight|tomorrow|yesterday|next|last|work|school"
    r"|lunch|dinner|breakfast|midnight|noon|dark|hours|morning|evening|night)\b"
)
# "Since" with a verb a few words on gives a reason: "Since my wife is vegan, …".
_REASON = (
    r"(?:[\w'’-]+\s+){0,3}(?:is|are|was|were|am|has|have|had|does|do|did|can|could|will|would)\b"
)
# "Since" opening a sentence before a pronoun gives a reason ("Since I'm vegan, …"); after
# a word, a time ("What has changed since I started the job?").
_AFTER = re.compile(
    rf"\bafter\s+(?!{_TIME_WORDS})(?:{_DETERMINER}|{_PRONOUN}|{_GERUND}|{_NAME})"
    rf"|\bsince\s+(?!{_TIME_WORDS}|{_REASON})(?:{_DETERMINER}|{_GERUND}|{_NAME})"
    rf"|(?<=\w )since\s+(?!{_REASON}){_PRONOUN}",
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
    if _CAUSE.search(text) is not None:
        return "cause"
    # a side of an event is asked of one that happened: "What should I check before
    # deploying?" and "It crashes after the user clicks submit" are about no dated event
    if PAST.search(text) is None:
        return None
    after = _first_in_time(_AFTER, text)
    before = _first_in_time(_BEFORE, text)
    if after is None or before is None:
        return "after" if after is not None else "before" if before is not None else None
    return "after" if after < before else "before"


def _first_in_time(pattern: re.Pattern[str], text: str) -> int | None:
    """Where ``pattern`` first matches ``text`` as a time, not a place or an order."""
    for found in pattern.finditer(text):
        if _PLACE.search(text, max(0, found.start() - 40), found.start()) is None:
            return found.start()
    return None

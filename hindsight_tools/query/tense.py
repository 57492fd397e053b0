"""Whether a text speaks of the past, from its words alone (no part-of-speech tagger).

:data:`PAST` finds a past form: an auxiliary ("did", "was", "had", with or without
"not"), a common irregular verb, or a verb in -ed right after its subject (a pronoun or a
capitalised name, with one adverb between: "she moved", "Priya finally started") or a few
words after "has"/"have" ("has his fitness improved"); an -ed word alone is as often an
adjective ("tired after running", "the updated service").

:func:`asks_of_the_past` is narrower, for reading which week, month or year a part not yet
begun belongs to ("What did I do at the end of the week?" asked on a Monday): a question
(it ends with "?" or opens with a question word, "tell me", "remind me", "could you", …),
not a statement, whose clause holding the part (the sentence, when that clause is time
words alone: "At the end of the week, what did I do?") has a past auxiliary ("did",
"where'd") or a subject with a past verb ("What happened", "Who came", "I ate"), and
whose sentence has no word of what is, will, may be or is being arranged. A statement
told in the past is as often a plan ("I booked a flight for the end of the month", "They
said the pool opens at the end of the month"), and so are questions with a present verb
("is", "do I", "what's", "have got", "opens"; not "do you remember"), the present perfect
("Have I scheduled …"), the future ("will", "'ll", "she'd"), a modal ("can be done",
"should"; not a request: "Could you tell me what I did …", "Can I see …"), an aim told
then or now ("hoping to", "agreed to meet", "supposed to") or a word of arranging
("booked", "book a table", "reserve", "sign up", "order a", "invite", "RSVP", "tickets",
"reminder").
"""

from __future__ import annotations

import re

from hindsight_tools.query.spans import FLAGS, SENTENCE_END

__all__ = ["PAST", "asks_of_the_past"]

_IRREGULAR = (
    r"went|left|got|made|came|took|gave|saw|met|felt|began|became|found|quit|ran|won|lost"
    r"|bought|sold|told|said|thought|brought|wrote|spent|kept|heard|held|paid|sent|built"
    r"|broke|fell|chose|done|gone|been|ate|drank|slept|drove|flew|wore|forgot|caught|taught"
    r"|stood|woke|rode|swam|(?-i:sat)"  # not "the SAT", "Sat"
)
_SUBJECT = r"(?:i|he|she|they|we|you|it|(?-i:[A-Z][a-z]+))(?:\s+(?:\w+ly|just|already|finally))?"
_ED = r"(?!(?:need|feed|seed|speed|breed|bleed)\b)\w{2,}ed\b"
PAST = re.compile(
    rf"\b(?:(?:did|was|were|had)(?:n[o'’]?t)?|{_IRREGULAR})\b"
    rf"|\b(?:{_SUBJECT}|(?:has|have)(?:\s+[\w'’]+){{0,3}}?)\s+{_ED}",
    FLAGS,
)
# a past auxiliary ("where'd I go" too), or a subject with a past verb, the subject a
# question word too ("What happened …", "Who came …"): "Any tickets left …?" is no past
_ASKED = r"(?:what|who|which\s+\w+|any(?:one|body)|some(?:one|body))"
_ASKED_PAST = re.compile(
    rf"\b(?:did|was|were|had)(?:n[o'’]?t)?\b|\b(?:what|where|who|when|how|why)['’]d\b"
    rf"|\b(?:{_SUBJECT}|{_ASKED})\s+(?:(?:{_IRREGULAR})\b|{_ED})",
    FLAGS,
)
_A_QUESTION = re.compile(
    r"\s*(?:(?:please|hey|hi|so|ok(?:ay)?|and|but)\W+)?"
    r"(?:what|when|where|who|whom|whose|which|why|how|did|was|were|had|tell me|remind me"
    r"|show me|list|recall|summari[sz]e|describe|give me|could you|can you|can i|would you)"
    r"\b|.*\?\s*$",
    FLAGS | re.DOTALL,
)
_NOT_PAST = re.compile(
    r"\b(?:is|are|(?<!\d )am|isn['’]t|aren['’]t"
    # "do you remember what I ate …" asks of the past
    r"|(?:do|does|don['’]t|doesn['’]t|have|has|haven['’]t|hasn['’]t)\s+"
    r"(?!you (?:remember|recall|know)\b)"
    r"(?:i|you|we|they|he|she|it|any(?:one|body)|some(?:one|body)|(?-i:[A-Z][a-z]+))"
    # a plan told in the present: "Did they say the pool opens at the end of the month?"
    r"|opens|starts|begins|ends|closes|happens|comes|goes|arrives|leaves|runs|takes place"
    r"|(?:what|that|it|there|here|who|where|how|he|she)['’]s"
    r"|(?:have|has)(?:\s+\w+)?\s+got|has to|have to|supposed to"
    r"|(?-i:will)|Will(?= (?:I|you|we|they|he|she|it)\b)|won['’]t|going to|gonna|shall"
    r"|should|must|might|cannot|(?:can|could|would)(?:n['’]t)?(?! (?:you|I|we)\b)"
    r"|(?:hop|plan|want|aim|need|intend|expect|agree|promis|decid|arrang|offer)"
    r"(?:s|e|es|ed|d|ing|ned|ning)? to"
    # arranging, not a book read or a meal ordered
    r"|book(?:ed|ing)|book (?:a|an|the|my|tickets?|flights?|tables?|rooms?)|reserv\w*"
    r"|schedul(?:ed|ing)|schedule (?:a|an|the|my)|regist\w*|sign(?:s|ed)? up|ordered"
    r"|order (?:a|an|the|some)|request\w*|invit\w*|rsvp\w*|tickets?|remind(?!\s+me\b)\w*)\b"
    r"|(?<!\bwhat)(?<!\bwhere)(?<!\bwho)(?<!\bwhen)(?<!\bhow)(?<!\bwhy)['’]d\b"
    r"|['’](?:ll|m|re)\b",
    FLAGS,
)
_CLAUSE_END = re.compile(r",(?=\s)")  # within a sentence (spans.SENTENCE_END)
_WORDS = re.compile(r"[\w'’-]+")
_TIME = (
    "at in on during around over by the of early late mid end middle beginning start"
    " first second third fourth last half week weekend month year monday tuesday wednesday"
    " thursday friday saturday sunday"
)
_TIME_WORDS = frozenset(_TIME.split())


def asks_of_the_past(text: str, pos: int = 0) -> bool:
    """Whether the sentence of ``text`` holding ``pos`` asks about the past, as above."""
    sentence, at, end = _around(SENTENCE_END, text, pos)
    if end == "?":
        sentence += "?"
    if _A_QUESTION.match(sentence) is None or _NOT_PAST.search(sentence) is not None:
        return False
    clause, _, _ = _around(_CLAUSE_END, sentence, at)
    if all(w.lower() in _TIME_WORDS or w[:1].isdigit() for w in _WORDS.findall(clause)):
        clause = sentence  # "At the end of the week, what did I do?"
    clause = clause.lstrip()
    clause = clause[:1].lower() + clause[1:]  # a first word capitalised is no name
    return _ASKED_PAST.search(clause) is not None


def _around(ends: re.Pattern[str], text: str, pos: int) -> tuple[str, int, str]:
    """The stretch of ``text`` between two ``ends`` that holds ``pos``, where ``pos`` lies
    in it, and the end after it ("" at the text's end)."""
    start = max((m.end() for m in ends.finditer(text, 0, pos)), default=0)
    end = ends.search(text, pos)
    stop = end.start() if end else len(text)
    return text[start:stop], pos - start, text[stop : stop + 1]

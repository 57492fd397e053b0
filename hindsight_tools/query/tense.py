"""Whether a text speaks of the past, from its words alone (no part-of-speech tagger).

A past form will do: an auxiliary ("did", "was", "had", with or without "not"), a common
irregular verb, or a verb in -ed right after its subject (a pronoun or a capitalised
name, with one adverb between: "she moved", "Priya finally started") or a few words after
"has"/"have" ("has his fitness improved"); an -ed word alone is as often an adjective
("tired after running", "the updated service").

:func:`speaks_of_the_past` reads one sentence (a long message speaks of many times),
whose first word is no subject ("Anything scheduled …?"), and reads it as past only when
none of its words speaks of what is, will or may be: a present verb ("is", "are", "do I",
"what's", "have got": "I had a busy weekend, what's on at the end of the week?" asks of
the week to come), a word of the future ("will", "going to", "'ll", "'d"), a modal ("can be
done", "should", "might"; not a request, "Could you tell me what I did …?", "Can I see
…"), or an aim, told then or now ("hoping to have it finished", "plan to", "agreed to meet",
"supposed to").
"""

from __future__ import annotations

import re

from hindsight_tools.query.spans import FLAGS

__all__ = ["PAST", "speaks_of_the_past"]

PAST = re.compile(
    r"\b(?:(?:did|was|were|had)(?:n[o'’]?t)?|went|left|got|made|came|took|gave|saw|met|felt"
    r"|began|became|found|quit|ran|won|lost|bought|sold|told|said|thought|brought|wrote"
    r"|spent|kept|heard|held|paid|sent|built|broke|fell|chose|done|gone|been|ate|drank"
    r"|slept|drove|flew|wore|forgot|caught|taught|sat|stood|woke|rode|swam)\b"
    r"|\b(?:(?:i|he|she|they|we|you|it|(?-i:[A-Z][a-z]+))(?:\s+(?:\w+ly|just|already|finally))?"
    r"|(?:has|have)(?:\s+[\w'’]+){0,3}?)\s+(?!(?:need|feed|seed|speed|breed|bleed)\b)\w{2,}ed\b",
    FLAGS,
)
_NOT_PAST = re.compile(
    r"\b(?:is|are|am|isn['’]t|aren['’]t"
    r"|(?:do|does|don['’]t|doesn['’]t)\s+(?:i|you|we|they|he|she|it|(?-i:[A-Z][a-z]+))"
    r"|(?:what|that|it|there|here|who|where|how|he|she)['’]s"
    r"|(?:have|has)(?:\s+\w+)?\s+got|has to|have to|supposed to"
    r"|(?-i:will)|Will(?= (?:I|you|we|they|he|she|it)\b)|won['’]t|going to|gonna|shall"
    r"|should|must|might|cannot|(?:can|could|would)(?:n['’]t)?(?! (?:you|I|we)\b)"
    r"|(?:hop|plan|want|aim|need|intend|expect|agree|promis|decid|arrang|offer|schedul)"
    r"(?:s|e|es|ed|d|ing|ned|ning)? to)\b"
    r"|['’](?:ll|d|m|re)\b",
    FLAGS,
)
# a clause ends at a sentence's end, a semicolon or a colon ("Caroline: I went …"); not
# at the dot of "Dr. Lee", "e.g." or "a.m."
_SENTENCE_END = re.compile(
    r"[?!;:\n]|(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bSt)(?<!\bvs)(?<!\bMrs)(?<!\bg)(?<!\be)"
    r"(?<!\bm)\.(?=\s|$)"
)


def speaks_of_the_past(text: str, pos: int = 0) -> bool:
    """Whether the sentence of ``text`` holding ``pos`` has a past form and no word of
    what is, will or may be."""
    start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, pos)), default=0)
    end = _SENTENCE_END.search(text, pos)
    sentence = text[start : end.start() if end else len(text)].lstrip()
    sentence = sentence[:1].lower() + sentence[1:]  # a first word capitalised is no name
    return PAST.search(sentence) is not None and _NOT_PAST.search(sentence) is None

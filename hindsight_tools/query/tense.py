"""Whether a text speaks of the past, from its words alone (no parser of verbs).

A past form will do: an auxiliary ("did", "was", "had", with or without "not"), a common
irregular verb, or a verb in -ed a few words after its subject or "has" ("she moved",
"Priya started", "has his fitness improved"); an -ed word alone is as often an adjective
("tired after running", "the updated service"). A sentence that also speaks of what
will or may be is not read as past: a word of the future ("will", "going to", "'ll"), a
modal ("can be done", "should", "might"; not a request, "Could you tell me what I did
…?") or an aim ("hoping to have it finished", "plan to", "need to"). "What will I do at
the end of the week, as I did last year?" asks about the week to come. Only the sentence
at hand is read: a long message speaks of many times.
"""

from __future__ import annotations

import re

from hindsight_tools.query.spans import FLAGS

__all__ = ["PAST", "speaks_of_the_past"]

PAST = re.compile(
    r"\b(?:(?:did|was|were|had)(?:n[o'’]?t)?|went|left|got|made|came|took|gave|saw|met|felt"
    r"|began|became|found|quit|ran|won|lost|bought|sold|told|said|thought|brought|wrote"
    r"|spent|kept|heard|held|paid|sent|built|broke|fell|chose|done|gone|been)\b"
    r"|\b(?:(?:i|he|she|they|we|you|it|(?-i:[A-Z][a-z]+))(?:\s+\w+ly)?"
    r"|(?:has|have)(?:\s+[\w'’]+){0,3}?)\s+(?!(?:need|feed|seed|speed|breed|bleed)\b)\w{2,}ed\b",
    FLAGS,
)
_NOT_PAST = re.compile(
    r"\b(?:will|won['’]t|going to|gonna|shall|should|must|might|cannot"
    r"|(?:can|could|would)(?:n['’]t)?(?! you\b)"
    r"|(?:hop|plan|want|aim|need|intend|expect)(?:s|e|es|ing|ning)? to)\b|['’]ll\b",
    FLAGS,
)


_SENTENCE_END = re.compile(r"[?!\n]|\.(?=\s|$)")


def speaks_of_the_past(text: str, pos: int = 0) -> bool:
    """Whether the sentence of ``text`` holding ``pos`` has a past form and no word of what
    will or may be."""
    start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, pos)), default=0)
    end = _SENTENCE_END.search(text, pos)
    sentence = text[start : end.start() if end else len(text)]
    return PAST.search(sentence) is not None and _NOT_PAST.search(sentence) is None

"""Standing instructions: memories that tell the agent how to answer, placed by the semantic
arm's rank (docs/design.md, Scoring).

"Always include version numbers when I ask about libraries", "Never use semicolons", "From
now on, answer in French": such a memory doesn't answer a question, it applies to the
questions of its topic. The reranking stages judge whether a memory answers: late
interaction matches a question's tokens, and a long message about libraries has more of
them than a one-line rule; a cross-encoder trained on search passages scores a rule low
against "Which libraries are used in this project?". The semantic arm's cosine measures
what a rule needs, that its topic is the question's; so a standing instruction that the
semantic arm ranks among its first ``max_rank`` is placed at that rank, or stays where it
is if that is higher.

Recognised by their opening words, a regular expression rather than a parser: an
imperative mood tagger would need a part-of-speech model for a handful of fixed openings.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import replace

from hindsight_tools.recall.prerank import RankedCandidate

__all__ = ["is_standing_instruction", "place_instructions"]

# "user: ", "Caroline: ": a speaker before the words, as chat transcripts store them
_SPEAKER = r"(?:[\w .'-]{1,40}: )?"
_LEAD_IN = r"(?:(?:ok(?:ay)?|so|and|also|please|oh|hey|btw)[,!.]? )*"
# "Always good to hear!", "Never a dull moment", "Never mind": always/never before
# something that isn't a verb
_NOT_AN_ORDER = (
    r"(?! (?:good|great|nice|fun|happy|glad|sad|been|a|an|the|so|such|there|here|true|mind"
    r"|again|ever|too|more|enough|easy|hard|the case)\b)"
)
_INSTRUCTION = re.compile(
    rf"^{_SPEAKER}{_LEAD_IN}"
    rf"(?:(?:always|never){_NOT_AN_ORDER}|from now on|going forward|when(?:ever)? i ask"
    r"|make sure (?:to|you)|remember to|don'?t ever|do not ever)\b",
    re.IGNORECASE,
)


def is_standing_instruction(text: str) -> bool:
    """Whether ``text`` opens as an instruction to the agent ("Always …", "Never …", "From
    now on …", "Whenever I ask …"), after an optional speaker ("user: ")."""
    return _INSTRUCTION.match(text.lstrip()) is not None


# The share of the gap to the candidate below that a placed instruction's final score takes,
# so the result stays ordered by final score.
_BETWEEN = 0.5


def place_instructions(
    ranked: Sequence[RankedCandidate],
    instructions: Collection[str],
    max_rank: int,
) -> list[RankedCandidate]:
    """``ranked`` (best first) with each standing instruction the semantic arm ranks
    ``r ≤ max_rank`` moved up to place ``r``, unless it already ranks higher; ties among
    instructions go by semantic rank. ``instructions`` are the ids of the candidates that are
    standing instructions (:func:`is_standing_instruction` of their text). Each moved
    candidate's final score is set between its new neighbours', so the list stays sorted by
    it; nothing else changes."""
    if max_rank <= 0:
        return list(ranked)
    places: dict[str, int] = {}
    for index, r in enumerate(ranked):
        semantic = r.candidate.source_ranks.get("semantic", max_rank + 1)
        if r.candidate.id in instructions and semantic - 1 < min(index, max_rank):
            places[r.candidate.id] = semantic - 1
    if not places:
        return list(ranked)
    order = [r for r in ranked if r.candidate.id not in places]
    moved = sorted(
        (r for r in ranked if r.candidate.id in places), key=lambda r: places[r.candidate.id]
    )
    for r in moved:
        order.insert(min(places[r.candidate.id], len(order)), r)
    return _rescored(order, set(places))


def _rescored(order: list[RankedCandidate], moved: set[str]) -> list[RankedCandidate]:
    result: list[RankedCandidate] = []
    for index, r in enumerate(order):
        if r.candidate.id not in moved:
            result.append(r)
            continue
        below = next((o.final for o in order[index + 1 :] if o.candidate.id not in moved), None)
        above = result[-1].final if result else None
        if above is None:
            final = (below if below is not None else r.final) / _BETWEEN
        elif below is None:
            final = above * _BETWEEN
        else:
            final = below + (above - below) * _BETWEEN
        result.append(replace(r, final=final))
    return result

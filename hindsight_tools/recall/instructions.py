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

from hindsight_tools.recall.prerank import SCORE_STEP, RankedCandidate

__all__ = ["is_standing_instruction", "place_instructions"]

# "user: ", "Caroline: ", "[user]: ", "User (10:32): ": a speaker before the words, as chat
# transcripts store them; the assistant's own advice ("assistant: Always back up …") is not
# the user's rule
_SPEAKER = (
    r"(?:(?!(?:assistant|system|ai|bot|model)\b)\[?[\w .'\u2019-]{1,40}\]?(?: \([^)]{0,20}\))?: )?"
)
_LEAD_IN = r"(?:(?:ok(?:ay)?|so|and|also|please|oh|hey|btw)[,!.]? )*"
# always/never before a word that could be an order: not "Always good to hear!", "Never a
# dull moment", "Never mind", "Always wanted to …", "Never thought …", nor "Never!" alone
_NOT_AN_ORDER = (
    r"(?= [a-z])(?! (?:good|great|nice|fun|happy|glad|sad|a|an|the|so|such|there|here|true"
    r"|mind|again|too|more|enough|easy|hard|thought|knew|heard|seen|done|had|was|were|been"
    r"|got|made|felt|said|went|saw|came|left|met|told|took|gave|found|\w+ed)\b)"
)
# "From now on I will go to the gym" is a plan, not a rule for the agent
_NOT_A_PLAN = r"(?!,? (?:i|we)(?:'ll| will| am| are|'m| shall)\b)"
_INSTRUCTION = re.compile(
    rf"^{_SPEAKER}{_LEAD_IN}"
    rf"(?:(?:always|never){_NOT_AN_ORDER}|(?:from now on|going forward){_NOT_A_PLAN}"
    r"|when(?:ever)? i ask|don['\u2019]?t ever|do not ever)\b",
    re.IGNORECASE,
)


def is_standing_instruction(text: str) -> bool:
    """Whether ``text`` opens as an instruction to the agent ("Always …", "Never …", "From
    now on …", "Whenever I ask …"), after an optional speaker ("user: ") other than the
    assistant."""
    return _INSTRUCTION.match(text.lstrip()) is not None


def place_instructions(
    ranked: Sequence[RankedCandidate],
    instructions: Collection[str],
    max_rank: int,
) -> list[RankedCandidate]:
    """``ranked`` (best first) with each standing instruction that the semantic arm ranks
    ``r ≤ max_rank`` at place ``r`` or higher: it keeps a higher place it has, and
    instructions that would share places go by semantic rank. ``instructions`` are the ids
    of the candidates that are standing instructions (:func:`is_standing_instruction` of
    their text). The other candidates keep their order; each placed instruction's final
    score is set between its new neighbours', so the list stays sorted by it."""
    targets: dict[str, tuple[int, int]] = {}
    for index, r in enumerate(ranked):
        semantic = r.candidate.source_ranks.get("semantic", max_rank + 1)
        if r.candidate.id in instructions and semantic <= max_rank:
            targets[r.candidate.id] = (min(index, semantic - 1), semantic)
    if not targets:
        return list(ranked)
    order = [r for r in ranked if r.candidate.id not in targets]
    place = -1
    for r in sorted(
        (r for r in ranked if r.candidate.id in targets), key=lambda r: targets[r.candidate.id]
    ):
        place = max(targets[r.candidate.id][0], place + 1)  # below the one placed before it
        order.insert(place, r)
    return _rescored(order, set(targets))


def _rescored(order: list[RankedCandidate], placed: set[str]) -> list[RankedCandidate]:
    result: list[RankedCandidate] = []
    for index, r in enumerate(order):
        if r.candidate.id not in placed:
            result.append(r)
            continue
        below = next((o.final for o in order[index + 1 :] if o.candidate.id not in placed), None)
        above = result[-1].final if result else None
        if above is None:
            final = r.final if below is None else max(r.final, below / SCORE_STEP)
        elif below is None:
            final = min(r.final, above * SCORE_STEP)
        else:
            final = (above + below) / 2
        result.append(replace(r, final=final))
    return result

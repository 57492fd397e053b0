"""What a memory is read after: the memory before it in its document.

A turn of a conversation often means little alone: "I've had them for three years now"
answers "How long have you had your turtles?", and only with that question does it say
what it is about. Besides its own late-interaction vectors, a memory that follows another
of the same document in one retain or import call is encoded a second time, read after
that one (:func:`read_after`), and a recall scores both readings
(:func:`hindsight_tools.recall.prerank.with_reading_in_context`). Why both and not the
reading in context alone: alone it wins single-fact questions and loses the questions whose
answer is several memories that each name the thing asked about, which their neighbours
then crowd out (docs/decisions/2026-12-07-memories-read-in-their-conversation.md).

Only the calls' own order is known: the first item of a retain call or of an import's
batch (of the new memories it writes), and an item retained alone, have nothing before
them. An item with a ``chunk`` and no ``document_id`` is given a document only when it is
written, after this reading, and so has none either. The memory a reading was made after
is stored with it (``context_of``): forgetting that memory, or retaining it again, drops
the reading, which holds that memory's words.

The cut of the previous memory counts characters: about 75 tokens of English, which leaves
most of the 128 tokens scored to the memory itself; in a script of about one token a
character it takes most of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from hindsight_tools.models import MemoryItem
from hindsight_tools.retain.units import PreparedItem

# The reading in context is encoded like any memory, over its first 256 tokens and scored
# on its first 128: a long previous memory is cut so that, in English, most of those are
# the memory's own.
PREVIOUS_MAX_CHARS = 300


def previous_positions(items: Sequence[MemoryItem]) -> list[int | None]:
    """For each item, the position of the nearest item before it with the same
    ``document_id``; None for an item without a document or first of its document."""
    last: dict[str, int] = {}
    found: list[int | None] = []
    for position, item in enumerate(items):
        document = item.document_id
        found.append(None if document is None else last.get(document))
        if document is not None:
            last[document] = position
    return found


def read_after(previous: str, text: str) -> str:
    """The text encoded for a memory read after ``previous``."""
    return f"{previous[:PREVIOUS_MAX_CHARS]}\n{text}"


def stored_readings(
    prepared: Sequence[PreparedItem], in_context: Sequence[bytes | None] | None
) -> dict[int, tuple[bytes, str]]:
    """By item index, for each item that has a reading in context (``in_context``, by
    index), that reading and the id of the memory it was read after: what is stored as
    ``context_vectors`` and ``context_of``."""
    if in_context is None:
        return {}
    ordered = sorted(prepared, key=lambda p: p.index)
    before = previous_positions([p.item for p in ordered])
    return {
        p.index: (read, ordered[position].id)
        for p, position in zip(ordered, before, strict=True)
        if position is not None and (read := in_context[p.index]) is not None
    }

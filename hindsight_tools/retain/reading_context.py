"""What a memory is read after: the memory before it in its document.

A turn of a conversation often means little alone: "I've had them for three years now"
answers "How long have you had your turtles?", and only with that question does it say
what it is about. Besides its own late-interaction vectors, a memory that follows another
of its document (``document_id``, or for an item that brings only a ``chunk``, the
chunk's) is encoded a second time, read after that one (:func:`read_after`), and a recall
scores both readings (:func:`hindsight_tools.recall.prerank.with_reading_in_context`).
Why both and not the reading in context alone: alone it wins single-fact questions and
loses the questions whose answer is several memories that each name the thing asked
about, which their neighbours then crowd out
(docs/decisions/2026-12-07-memories-read-in-their-conversation.md).

A memory's document gives the order: each memory is stored with its position in its
document (``document_position``, growing with every call that adds to the document), so
the memory before the first item of a call is found in the store
(:mod:`~hindsight_tools.retain.document_order`), and an agent that retains a conversation a
message at a time reads each message after the one before, as a batch retain of the same
messages would. A memory retained again keeps its place in its document; first of its
document in its call, it is read after the memory stored before that place, and otherwise
after the item before it in the call, as new items are. An import carries the last memory
of each document from the batch being written to the next, which is encoded meanwhile.
Memories stored before the store kept positions (migration
0014), and items without a document, are never read after.

The memory a reading was made after is stored with it (``context_of``): forgetting that
memory, or retaining it again, drops the reading, which holds that memory's words, until
the backfill reads it after the memory now before it
(:func:`~hindsight_tools.retain.token_vectors.unread_plan`). One
found in the store is checked again when the reading is written, under the bank's lock:
if it was forgotten or rewritten since it was read, the reading is not kept.

The cut of the previous memory counts characters: about 75 tokens of English, which leaves
most of the 128 tokens scored to the memory itself; in a script of about one token a
character it takes most of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from hindsight_tools.retain.units import PreparedItem

# The reading in context is encoded like any memory, over its first 256 tokens and scored
# on its first 128: a long previous memory is cut so that, in English, most of those are
# the memory's own.
PREVIOUS_MAX_CHARS = 300


@dataclass(frozen=True)
class Before:
    """The memory another is read after: its id, the start of its text that the reading
    holds, and whether it was found in the store rather than written in the same
    transaction (then it is checked again when the reading is written)."""

    id: str
    text: str
    stored: bool = False

    @classmethod
    def of(cls, memory_id: str, text: str, stored: bool = False) -> Before:
        return cls(memory_id, text[:PREVIOUS_MAX_CHARS], stored)


def previous_positions(documents: Sequence[str | None]) -> list[int | None]:
    """For each of a call's items (by its document), the position of the nearest item
    before it with the same document; None for an item without a document or first of its
    document."""
    last: dict[str, int] = {}
    found: list[int | None] = []
    for position, document in enumerate(documents):
        found.append(None if document is None else last.get(document))
        if document is not None:
            last[document] = position
    return found


def firsts_of_documents(members: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """Each document of a call's ``(id, document)`` pairs, in the call's order, and the id
    of its first item: what the memory before is looked up for in the store."""
    firsts: dict[str, str] = {}
    for memory_id, document in members:
        if document is not None:
            firsts.setdefault(document, memory_id)
    return firsts


def memories_before(
    prepared: Sequence[PreparedItem], earlier: Mapping[str, Before]
) -> dict[int, Before]:
    """By item index, the memory each item is read after: the item before it in its
    document within the call, or for the first of its document, the memory ``earlier``
    holds for that document (found in the store, or carried from an import's batch
    before)."""
    ordered = sorted(prepared, key=lambda p: p.index)
    previous = previous_positions([p.document_id for p in ordered])
    found: dict[int, Before] = {}
    for p, position in zip(ordered, previous, strict=True):
        if position is not None:
            found[p.index] = Before.of(ordered[position].id, ordered[position].item.text)
        elif p.document_id is not None and p.document_id in earlier:
            found[p.index] = earlier[p.document_id]
    return found


def last_of_documents(prepared: Sequence[PreparedItem]) -> dict[str, Before]:
    """The last memory of each document of ``prepared``: what the next batch of an import
    is read after. Marked as stored: the next batch is written in its own transaction,
    after that memory's, which another writer may have stored first."""
    last: dict[str, Before] = {}
    for p in sorted(prepared, key=lambda p: p.index):
        if p.document_id is not None:
            last[p.document_id] = Before.of(p.id, p.item.text, stored=True)
    return last


def read_after(previous: str, text: str) -> str:
    """The text encoded for a memory read after ``previous``."""
    return f"{previous[:PREVIOUS_MAX_CHARS]}\n{text}"


def stored_readings(
    in_context: Sequence[bytes | None] | None, before: Mapping[int, Before]
) -> dict[int, tuple[bytes, str]]:
    """By item index, for each item that has a reading in context (``in_context``, by
    index), that reading and the id of the memory it was read after: what is stored as
    ``context_vectors`` and ``context_of``."""
    if in_context is None:
        return {}
    return {
        index: (read, memory.id)
        for index, memory in before.items()
        if (read := in_context[index]) is not None
    }

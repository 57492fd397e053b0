"""Where a memory stands in its document, in SQL: the positions written with a call's
memories, the memory before a call's first item of each document, and the check, when a
reading made after a stored memory is written, that the memory is still what was read
(:mod:`~hindsight_tools.retain.reading_context`).

All statements are parameterised and filtered on the bank.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from hindsight_tools.retain.reading_context import PREVIOUS_MAX_CHARS, Before, firsts_of_documents
from hindsight_tools.retain.units import PreparedItem
from hindsight_tools.runtime.plan import Plan, Statement

# The memory before each document's first item of a call: the document's last memory
# below that item's own place when the item is stored there already (it is retained
# again), else its last; never one of the call's own. Read backwards on the document
# index, one entry per document.
_STORED_BEFORE = """
SELECT d.document_id, p.id, left(p.text, %(chars)s)
FROM unnest(%(documents)s::text[], %(firsts)s::text[]) AS d(document_id, first_id)
CROSS JOIN LATERAL (
    SELECT u.id, u.text FROM memory_units u
    WHERE u.bank_id = %(bank)s AND u.document_id = d.document_id
      AND u.document_position < coalesce(
          (SELECT f.document_position FROM memory_units f
           WHERE f.bank_id = %(bank)s AND f.id = d.first_id
             AND f.document_id = d.document_id),
          9223372036854775807)
      AND u.id <> ALL(%(ids)s)
    ORDER BY u.document_position DESC
    LIMIT 1
) AS p
"""
# Each document's last position; run under the bank's lock, so that a call's positions
# follow those of every call written before it.
_DOCUMENT_ENDS = """
SELECT d, (SELECT max(u.document_position) FROM memory_units u
           WHERE u.bank_id = %(bank)s AND u.document_id = d)
FROM unnest(%(documents)s::text[]) AS d
"""
# A reading made after a memory found in the store before the write's lock was taken is
# kept only if that memory is still there with the words it was read with.
_DROP_STALE_READINGS = """
UPDATE memory_token_vectors t SET context_vectors = NULL, context_of = NULL
FROM unnest(%(ids)s::text[], %(befores)s::text[], %(texts)s::text[])
     AS r(id, before_id, before_text)
WHERE t.bank_id = %(bank)s AND t.id = r.id AND t.context_of = r.before_id
  AND NOT EXISTS (
      SELECT 1 FROM memory_units u
      WHERE u.bank_id = %(bank)s AND u.id = r.before_id
        AND left(u.text, %(chars)s) = r.before_text)
"""


def stored_before_plan(
    bank_id: str, members: Sequence[tuple[str, str | None]]
) -> Plan[dict[str, Before]]:
    """By document, the stored memory that the first of a call's ``(id, document)`` pairs
    in it is read after, where there is one."""
    firsts = firsts_of_documents(members)
    if not firsts:
        return {}
    rows = yield Statement(
        _STORED_BEFORE,
        {
            "bank": bank_id,
            "documents": list(firsts),
            "firsts": list(firsts.values()),
            "ids": [memory_id for memory_id, _ in members],
            "chars": PREVIOUS_MAX_CHARS,
        },
    )
    return {str(row[0]): Before(str(row[1]), str(row[2]), stored=True) for row in rows}


def positions_plan(bank_id: str, prepared: Sequence[PreparedItem]) -> Plan[dict[int, int]]:
    """By item index, the position each item with a document takes in it: after the
    document's last stored memory, in the call's order. A memory retained again into the
    document it is in keeps its place (the upsert keeps the stored position)."""
    documents = list(dict.fromkeys(p.document_id for p in prepared if p.document_id))
    if not documents:
        return {}
    rows = yield Statement(_DOCUMENT_ENDS, {"bank": bank_id, "documents": documents})
    ends = {str(row[0]): int(row[1] or 0) for row in rows}
    return following_positions(prepared, ends)


def following_positions(
    prepared: Sequence[PreparedItem], ends: Mapping[str, int]
) -> dict[int, int]:
    """By item index, ``ends[document]`` + the item's rank within its document in the
    call (from 1)."""
    taken = dict(ends)
    positions: dict[int, int] = {}
    for p in sorted(prepared, key=lambda p: p.index):
        if p.document_id is not None:
            taken[p.document_id] = taken.get(p.document_id, 0) + 1
            positions[p.index] = taken[p.document_id]
    return positions


def drop_stale_readings_plan(
    bank_id: str,
    prepared: Sequence[PreparedItem],
    before: Mapping[int, Before],
    written: Collection[str] | None = None,
) -> Plan[None]:
    """Drops the readings of ``prepared`` made after a memory that is not, or no longer,
    stored with the words read: one found in the store and forgotten or rewritten since, or
    one of the call's own that the call did not write (``written``: the ids it wrote, when
    not all). The caller runs it after writing the readings, under the lock."""
    checked = [
        (p.id, memory)
        for p in prepared
        if (memory := before.get(p.index))
        and (memory.stored or (written is not None and memory.id not in written))
    ]
    if not checked:
        return
    yield Statement(
        _DROP_STALE_READINGS,
        {
            "bank": bank_id,
            "ids": [memory_id for memory_id, _ in checked],
            "befores": [memory.id for _, memory in checked],
            "texts": [memory.text for _, memory in checked],
            "chars": PREVIOUS_MAX_CHARS,
        },
        "none",
    )

"""The late-interaction vectors of stored memories: finding the memories without them, and
storing them (the backfill; retain writes its own inside its transaction), with their
reading after the memory before them in their document where the store knows it
(:mod:`~hindsight_tools.retain.reading_context`); and finding the memories whose reading
in context is missing although the store knows the memory before them (it was dropped
when that memory was forgotten or retained again, or they were stored with readings off),
and storing it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hindsight_tools.retain.plans import LOCK_BANK
from hindsight_tools.retain.reading_context import PREVIOUS_MAX_CHARS, Before
from hindsight_tools.runtime.plan import Plan, Statement

# The memory before memory m by its place in its document (none for a memory stored before
# positions were kept): the backfill reads m after it.
_BEFORE_IN_DOCUMENT = """(
    SELECT p.id, p.text FROM memory_units p
    WHERE p.bank_id = %(bank)s AND p.document_id = m.document_id
      AND p.document_position < m.document_position
    ORDER BY p.document_position DESC
    LIMIT 1
) AS b"""
# Backfill of late-interaction vectors (see MemoryEngine.backfill_token_vectors).
_MISSING_TOKEN_VECTORS = f"""
SELECT m.id, m.text, b.id, left(b.text, %(chars)s)
FROM memory_units m
LEFT JOIN LATERAL {_BEFORE_IN_DOCUMENT} ON true
WHERE m.bank_id = %(bank)s
  AND NOT EXISTS (SELECT 1 FROM memory_token_vectors v
                  WHERE v.bank_id = %(bank)s AND v.id = m.id)
ORDER BY m.id LIMIT %(limit)s
"""
# The one statement that reads across banks, by design: a backfill of the whole store
# enumerates its banks, then works in one bank at a time like every other statement.
BANK_IDS = "SELECT bank_id FROM banks ORDER BY bank_id"
# The text guard keeps a memory re-retained meanwhile from getting the vectors of its old
# text, and a retain that stored newer vectors first wins the conflict. The reading in
# context is kept only while the memory it was read after still starts with the words
# read; written under the bank's lock, so that a forgetting either comes first (and the
# check sees it) or drops the reading after.
_STORE_TOKEN_VECTORS = """
INSERT INTO memory_token_vectors (bank_id, id, vectors, context_vectors, context_of)
SELECT m.bank_id, m.id, %(vectors)s, c.vectors, c.of
FROM memory_units m
LEFT JOIN LATERAL (
    SELECT %(context_vectors)s::bytea AS vectors, p.id AS of FROM memory_units p
    WHERE p.bank_id = %(bank)s AND p.id = %(context_of)s
      AND left(p.text, %(chars)s) = %(before_text)s
) AS c ON true
WHERE m.bank_id = %(bank)s AND m.id = %(id)s AND m.text = %(text)s
ON CONFLICT DO NOTHING
"""


# Memories with their own vectors but no reading in context, and the memory now before
# each in its document; by id after ``after``, so that a reading that cannot be stored
# (its memory changed meanwhile) is not asked for again by the same backfill.
_UNREAD = f"""
SELECT m.id, m.text, b.id, left(b.text, %(chars)s)
FROM memory_token_vectors v
JOIN memory_units m ON m.bank_id = v.bank_id AND m.id = v.id
CROSS JOIN LATERAL {_BEFORE_IN_DOCUMENT}
WHERE v.bank_id = %(bank)s AND v.context_vectors IS NULL AND v.id > %(after)s
  AND m.id > %(after)s AND m.document_id IS NOT NULL AND m.document_position IS NOT NULL
ORDER BY v.id LIMIT %(limit)s
"""
# Kept only while, under the bank's lock, the memory still has the text read and the one
# it was read after still comes before it in its document with the words read; returns
# the memories given their reading.
_STORE_READINGS = """
UPDATE memory_token_vectors t SET context_vectors = r.vectors, context_of = p.id
FROM unnest(%(ids)s::text[], %(texts)s::text[], %(vectors)s::bytea[], %(of)s::text[],
            %(words)s::text[]) AS r(id, text, vectors, of, words),
     memory_units m, memory_units p
WHERE t.bank_id = %(bank)s AND t.id = r.id AND t.context_vectors IS NULL
  AND m.bank_id = %(bank)s AND m.id = r.id AND m.text = r.text
  AND p.bank_id = %(bank)s AND p.id = r.of
  AND p.document_id = m.document_id AND p.document_position < m.document_position
  AND left(p.text, %(chars)s) = r.words
RETURNING t.id
"""


@dataclass(frozen=True)
class Missing:
    """A memory the backfill encodes (stored without late-interaction vectors, or without
    its reading in context), and the memory before it in its document, where the store
    knows one."""

    bank_id: str
    id: str
    text: str
    before: Before | None


def missing_token_vectors_plan(bank_id: str | None, limit: int) -> Plan[list[Missing]]:
    """Up to ``limit`` memories stored without late-interaction vectors, from ``bank_id``
    or, with None, from the banks in order."""
    banks = yield from banks_plan(bank_id)
    found: list[Missing] = []
    for bank in banks:
        if len(found) >= limit:
            break
        rows = yield Statement(
            _MISSING_TOKEN_VECTORS,
            {"bank": bank, "limit": limit - len(found), "chars": PREVIOUS_MAX_CHARS},
        )
        found += [
            Missing(
                bank,
                str(i),
                str(t),
                None if before is None else Before(str(before), str(words), stored=True),
            )
            for i, t, before, words in rows
        ]
    return found


def store_token_vectors_plan(
    rows: Sequence[Missing],
    vectors: Sequence[bytes],
    in_context: Sequence[bytes | None] | None = None,
) -> Plan[None]:
    """Stores each memory's vectors and, by the same index in ``in_context``, its reading
    after the memory before it."""
    for bank in sorted({row.bank_id for row in rows}):
        yield Statement(LOCK_BANK, {"bank": bank}, "none")
    params = []
    for index, (row, own) in enumerate(zip(rows, vectors, strict=True)):
        read = None if in_context is None else in_context[index]
        before = row.before if read is not None else None
        params.append(
            {
                "bank": row.bank_id,
                "id": row.id,
                "text": row.text,
                "vectors": own,
                "context_vectors": read,
                "context_of": None if before is None else before.id,
                "before_text": None if before is None else before.text,
                "chars": PREVIOUS_MAX_CHARS,
            }
        )
    yield Statement(_STORE_TOKEN_VECTORS, params, "many")


def banks_plan(bank_id: str | None) -> Plan[list[str]]:
    """``bank_id`` alone, or with None every bank, in order."""
    if bank_id is not None:
        return [bank_id]
    return [str(b) for (b,) in (yield Statement(BANK_IDS))]


def unread_plan(bank_id: str, after: str, limit: int) -> Plan[list[Missing]]:
    """Up to ``limit`` memories of ``bank_id``, by id after ``after``, that have their own
    late-interaction vectors but no reading in context, though a memory comes before them
    in their document."""
    rows = yield Statement(
        _UNREAD, {"bank": bank_id, "after": after, "limit": limit, "chars": PREVIOUS_MAX_CHARS}
    )
    return [
        Missing(bank_id, str(i), str(t), Before(str(before), str(words), stored=True))
        for i, t, before, words in rows
    ]


def store_readings_plan(
    bank_id: str, rows: Sequence[Missing], readings: Sequence[bytes | None]
) -> Plan[int]:
    """Stores each memory's reading after the memory before it (by the same index in
    ``readings``), where both are as they were read; returns how many were stored."""
    kept = [
        (row, row.before, read)
        for row, read in zip(rows, readings, strict=True)
        if read is not None and row.before is not None
    ]
    if not kept:
        return 0
    yield Statement(LOCK_BANK, {"bank": bank_id}, "none")
    stored = yield Statement(
        _STORE_READINGS,
        {
            "bank": bank_id,
            "ids": [row.id for row, _, _ in kept],
            "texts": [row.text for row, _, _ in kept],
            "vectors": [read for _, _, read in kept],
            "of": [before.id for _, before, _ in kept],
            "words": [before.text for _, before, _ in kept],
            "chars": PREVIOUS_MAX_CHARS,
        },
    )
    return len(stored)

"""Forgetting memories: deleting them and everything derived from them, in one transaction.

The inverse of :func:`~hindsight_tools.retain.plans.retain_plan`. A memory's entity
mentions and keyword postings go first, then its links both ways, causal ones included
(links carry no foreign keys: migration 0009), and the readings of other memories made
after it (they hold its words), then the memory, whose foreign key takes its token
vectors. What is shared is brought back in line by hand: the bank's BM25
statistics, entity mention counts (an entity no memory mentions any more goes), and chunks
and documents that no memory refers to any more.
"""

from __future__ import annotations

from collections.abc import Sequence

from hindsight_tools.retain.plans import (
    BANK_TOTALS,
    COUNT_MENTIONS,
    DROP_READINGS_AFTER,
    DROP_TERMS,
    DROP_UNIT_ENTITIES,
    DROP_UNUSED_ENTITIES,
    DROP_UNUSED_TERMS,
    LOCK_BANK,
)
from hindsight_tools.runtime.plan import Plan, Statement

DROP_LINKS_BOTH_WAYS = """
DELETE FROM memory_links
WHERE bank_id = %(bank)s AND (from_unit_id = ANY(%(ids)s) OR to_unit_id = ANY(%(ids)s))
"""
_DELETE_UNITS = """
DELETE FROM memory_units WHERE bank_id = %(bank)s AND id = ANY(%(ids)s)
RETURNING id, chunk_id, document_id
"""
_DOCUMENT_UNITS = """
SELECT id FROM memory_units WHERE bank_id = %(bank)s AND document_id = %(document)s ORDER BY id
"""
_DROP_ORPHAN_CHUNKS = """
DELETE FROM chunks c WHERE c.bank_id = %(bank)s AND c.chunk_id = ANY(%(chunks)s)
  AND NOT EXISTS (SELECT 1 FROM memory_units m
                  WHERE m.bank_id = c.bank_id AND m.chunk_id = c.chunk_id)
"""
_DROP_ORPHAN_DOCUMENTS = """
DELETE FROM documents d WHERE d.bank_id = %(bank)s AND d.document_id = ANY(%(documents)s)
  AND NOT EXISTS (SELECT 1 FROM memory_units m
                  WHERE m.bank_id = d.bank_id AND m.document_id = d.document_id)
  AND NOT EXISTS (SELECT 1 FROM chunks c
                  WHERE c.bank_id = d.bank_id AND c.document_id = d.document_id)
"""
_DELETE_DOCUMENT = "DELETE FROM documents WHERE bank_id = %(bank)s AND document_id = %(document)s"


def forget_plan(bank_id: str, ids: Sequence[str]) -> Plan[int]:
    """Delete the memories of ``bank_id`` among ``ids`` (unknown ids are ignored); how many
    there were."""
    bank = {"bank": bank_id}
    wanted = sorted(set(ids))
    if not wanted:
        return 0
    # the same lock as retain: a concurrent retain would race on entities and statistics
    yield Statement(LOCK_BANK, bank, "none")
    old_entity_ids = sorted(
        {row[0] for row in (yield Statement(DROP_UNIT_ENTITIES, {**bank, "ids": wanted}))}
    )
    yield Statement(DROP_TERMS, {**bank, "ids": wanted}, "none")
    yield Statement(DROP_UNUSED_TERMS, bank, "none")
    yield Statement(DROP_LINKS_BOTH_WAYS, {**bank, "ids": wanted}, "none")
    yield Statement(DROP_READINGS_AFTER, {**bank, "ids": wanted}, "none")
    deleted = yield Statement(_DELETE_UNITS, {**bank, "ids": wanted})
    if not deleted:
        return 0
    yield Statement(BANK_TOTALS, bank, "none")
    if old_entity_ids:
        counts = {**bank, "keys": [], "old_ids": old_entity_ids}
        yield Statement(COUNT_MENTIONS, counts, "none")
        yield Statement(DROP_UNUSED_ENTITIES, counts, "none")
    chunks = sorted({str(r[1]) for r in deleted if r[1] is not None})
    if chunks:
        yield Statement(_DROP_ORPHAN_CHUNKS, {**bank, "chunks": chunks}, "none")
    documents = sorted({str(r[2]) for r in deleted if r[2] is not None})
    if documents:
        yield Statement(_DROP_ORPHAN_DOCUMENTS, {**bank, "documents": documents}, "none")
    return len(deleted)


def forget_document_plan(bank_id: str, document_id: str) -> Plan[int]:
    """Delete a document, its chunks and every memory retained from it; how many memories."""
    bank = {"bank": bank_id}
    yield Statement(LOCK_BANK, bank, "none")
    ids = [str(r[0]) for r in (yield Statement(_DOCUMENT_UNITS, {**bank, "document": document_id}))]
    count = yield from forget_plan(bank_id, ids)
    yield Statement(_DELETE_DOCUMENT, {**bank, "document": document_id}, "none")
    return count

"""Fetching the full rows of ranked candidates, and their source chunks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hindsight_tools.runtime.plan import Plan, Statement

# A memory's entity names, sorted, for the row ``m`` of the bank ``%(bank)s``.
ENTITY_NAMES = """coalesce((SELECT array_agg(e.canonical_name ORDER BY e.canonical_name)
                 FROM unit_entities ue
                 JOIN entities e ON e.bank_id = %(bank)s AND e.id = ue.entity_id
                 WHERE ue.bank_id = %(bank)s AND ue.unit_id = m.id), '{}')"""
_MEMORIES = f"""
SELECT m.id, m.text, m.fact_type, m.context, m.occurred_start, m.occurred_end,
       m.mentioned_at, m.tags, m.document_id, m.chunk_id, m.metadata, m.proof_count,
       {ENTITY_NAMES}
FROM memory_units m
WHERE m.bank_id = %(bank)s AND m.id = ANY(%(ids)s)
"""
_TOKEN_VECTORS = """
SELECT id, vectors, NULL FROM memory_token_vectors WHERE bank_id = %(bank)s AND id = ANY(%(ids)s)
"""
# A memory's reading in context only when asked for: it doubles the bytes fetched.
_TOKEN_VECTORS_IN_CONTEXT = """
SELECT id, vectors, context_vectors
FROM memory_token_vectors WHERE bank_id = %(bank)s AND id = ANY(%(ids)s)
"""
_CHUNKS = """
SELECT chunk_id, document_id, chunk_index, chunk_text
FROM chunks WHERE bank_id = %(bank)s AND chunk_id = ANY(%(ids)s)
"""


@dataclass(frozen=True)
class MemoryRow:
    id: str
    text: str
    fact_type: str
    context: str | None
    occurred_start: datetime | None
    occurred_end: datetime | None
    mentioned_at: datetime | None
    tags: list[str]
    document_id: str | None
    chunk_id: str | None
    metadata: dict[str, Any]
    proof_count: int
    entities: list[str]


@dataclass(frozen=True)
class ChunkRow:
    chunk_id: str
    document_id: str
    chunk_index: int
    text: str


def memories_plan(bank_id: str, ids: Sequence[str]) -> Plan[dict[str, MemoryRow]]:
    if not ids:
        return {}
    rows = yield Statement(_MEMORIES, {"bank": bank_id, "ids": list(ids)})
    return {str(r[0]): MemoryRow(*r) for r in rows}


@dataclass(frozen=True)
class StoredReadings:
    """Stored late-interaction vectors by memory id: each memory's own, and its reading
    after the memory before it in its document where it has one
    (:mod:`~hindsight_tools.retain.reading_context`)."""

    own: dict[str, bytes]
    in_context: dict[str, bytes]


def token_vectors_plan(
    bank_id: str, ids: Sequence[str], *, in_context: bool = False
) -> Plan[StoredReadings]:
    """The stored late-interaction vectors of those of ``ids`` that have them; their
    readings in context too with ``in_context``."""
    if not ids:
        return StoredReadings({}, {})
    # ~16 KB a memory, 300 memories: as hex (the text format) this took 22 ms on the dev
    # banks, 9 ms in binary.
    rows = yield Statement(
        _TOKEN_VECTORS_IN_CONTEXT if in_context else _TOKEN_VECTORS,
        {"bank": bank_id, "ids": list(ids)},
        binary=True,
    )
    return StoredReadings(
        own={str(r[0]): bytes(r[1]) for r in rows},
        in_context={str(r[0]): bytes(r[2]) for r in rows if r[2] is not None},
    )


def chunks_plan(bank_id: str, chunk_ids: Sequence[str]) -> Plan[dict[str, ChunkRow]]:
    if not chunk_ids:
        return {}
    rows = yield Statement(_CHUNKS, {"bank": bank_id, "ids": list(chunk_ids)})
    return {str(r[0]): ChunkRow(*r) for r in rows}

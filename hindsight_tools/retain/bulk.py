"""The bulk write path of an import: one batch, new memories only, rows by COPY.

A retain upserts row by row; an import streams a large file whose memories are mostly new,
so each batch is copied into a transaction-local staging table and inserted from there in
one statement, keyword postings, entities and links following set-wise
(:func:`~hindsight_tools.retain.plans.derive`). A memory whose id the bank already holds is
skipped, not replaced: running an interrupted import again resumes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Json

from hindsight_tools.encoders.embedding import Vectors
from hindsight_tools.retain.plans import derive, write_sources
from hindsight_tools.retain.units import PreparedItem
from hindsight_tools.runtime.plan import Plan, Statement
from hindsight_tools.settings import Settings

EXISTING_IDS = "SELECT id FROM memory_units WHERE bank_id = %(bank)s AND id = ANY(%(ids)s)"
_STAGE = """
CREATE TEMP TABLE hindsight_import_stage (
    position integer, id text, text text, context text, fact_type text, embedding vector,
    occurred_start timestamptz, occurred_end timestamptz, mentioned_at timestamptz,
    tags text[], proof_count integer, document_id text, chunk_id text, metadata json,
    entity_text text, token_vectors bytea
) ON COMMIT DROP
"""
_COPY = """
COPY hindsight_import_stage (
    position, id, text, context, fact_type, embedding, occurred_start, occurred_end,
    mentioned_at, tags, proof_count, document_id, chunk_id, metadata, entity_text,
    token_vectors)
FROM STDIN (FORMAT BINARY)
"""
# Binary: a vector goes as its 4-byte floats instead of as decimal text.
_STAGE_TYPES = (
    "int4", "text", "text", "text", "text", "vector", "timestamptz", "timestamptz",
    "timestamptz", "text[]", "int4", "text", "text", "json", "text", "bytea",
)  # fmt: skip
# The tsvector is computed once per row (LATERAL) for both the document and its length.
_INSERT_UNITS = """
INSERT INTO memory_units (
    bank_id, id, text, context, fact_type, embedding, occurred_start, occurred_end,
    mentioned_at, tags, proof_count, document_id, chunk_id, metadata, search_vector,
    search_length)
SELECT %(bank)s, s.id, s.text, s.context, s.fact_type, s.embedding, s.occurred_start,
       s.occurred_end, s.mentioned_at, s.tags, s.proof_count, s.document_id, s.chunk_id,
       s.metadata, d.doc,
       (SELECT coalesce(sum(coalesce(cardinality(t.positions), 1)), 0) FROM unnest(d.doc) t)
FROM hindsight_import_stage s
CROSS JOIN LATERAL (
    SELECT to_tsvector(%(language)s::regconfig, concat_ws(' ', s.text, s.context, s.entity_text))
) AS d(doc)
ORDER BY s.position
ON CONFLICT (bank_id, id) DO NOTHING
RETURNING id
"""
_INSERT_TOKEN_VECTORS = """
INSERT INTO memory_token_vectors (bank_id, id, vectors)
SELECT %(bank)s, s.id, s.token_vectors FROM hindsight_import_stage s
WHERE s.token_vectors IS NOT NULL AND s.id = ANY(%(ids)s)
ON CONFLICT DO NOTHING
"""


def existing_ids_plan(bank_id: str, ids: Sequence[str]) -> Plan[set[str]]:
    """Which of ``ids`` the bank holds already."""
    rows = yield Statement(EXISTING_IDS, {"bank": bank_id, "ids": list(ids)})
    return {str(row[0]) for row in rows}


def import_plan(
    bank_id: str,
    prepared: Sequence[PreparedItem],
    embeddings: Vectors,
    settings: Settings,
    token_vectors: Sequence[bytes | None] | None = None,
) -> Plan[list[str]]:
    """One batch of an import in one transaction; returns the ids it wrote, in order (a
    memory another writer stored meanwhile is left as that writer stored it)."""
    yield from write_sources(bank_id, prepared)
    yield Statement(_STAGE, None, "none")
    rows = [_stage_row(p, embeddings[p.index], token_vectors) for p in prepared]
    yield Statement(_COPY, rows, "copy", copy_types=_STAGE_TYPES)
    language = settings.text_search_extension_native_language
    written = yield Statement(_INSERT_UNITS, {"bank": bank_id, "language": language})
    ids = [str(row[0]) for row in written]
    if not ids:
        return []
    if token_vectors is not None:
        yield Statement(_INSERT_TOKEN_VECTORS, {"bank": bank_id, "ids": ids}, "none")
    kept = set(ids)
    yield from derive(bank_id, [p for p in prepared if p.id in kept], settings)
    return ids


def _stage_row(
    p: PreparedItem, embedding: Any, token_vectors: Sequence[bytes | None] | None
) -> tuple[Any, ...]:
    item = p.item
    return (
        p.index,
        p.id,
        item.text,
        item.context,
        item.fact_type,
        embedding,
        item.occurred_start,
        item.occurred_end,
        item.mentioned_at,
        list(item.tags),
        item.proof_count,
        p.document_id,
        p.chunk_id,
        Json(item.metadata),
        " ".join(p.entities),
        None if token_vectors is None else token_vectors[p.index],
    )

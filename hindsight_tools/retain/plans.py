"""The write path: checked items -> rows, entities and links
(:mod:`~hindsight_tools.retain.links`), in one transaction (docs/design.md, Retain).

:func:`~hindsight_tools.retain.units.prepare_items` is pure (ids, entities, chunk ids);
:func:`retain_plan` is the SQL, as a sans-I/O plan run by the sync or async engine. All
statements are parameterised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from psycopg.types.json import Json

from hindsight_tools.encoders.embedding import Vectors
from hindsight_tools.models import RetainResult
from hindsight_tools.retain import links
from hindsight_tools.retain.document_order import drop_stale_readings_plan, positions_plan
from hindsight_tools.retain.reading_context import Before, stored_readings
from hindsight_tools.retain.units import PreparedItem, entity_key
from hindsight_tools.runtime.plan import Plan, Statement
from hindsight_tools.settings import Settings

LOCK_BANK = "SELECT pg_advisory_xact_lock(hashtextextended(%(bank)s, 0))"
_INSERT_BANK = "INSERT INTO banks (bank_id) VALUES (%(bank)s) ON CONFLICT DO NOTHING"
_INSERT_DOCUMENTS = """
INSERT INTO documents (bank_id, document_id)
SELECT %(bank)s, d FROM unnest(%(documents)s::text[]) AS d
ON CONFLICT DO NOTHING
"""
_INSERT_CHUNK = """
INSERT INTO chunks (bank_id, chunk_id, document_id, chunk_index, chunk_text)
SELECT %(bank)s, %(chunk_id)s, %(document_id)s,
       coalesce(max(chunk_index) + 1, 0), %(text)s
FROM chunks WHERE bank_id = %(bank)s AND document_id = %(document_id)s
ON CONFLICT (bank_id, chunk_id) DO NOTHING
"""
_EXISTING_IDS = "SELECT id FROM memory_units WHERE bank_id = %(bank)s AND id = ANY(%(ids)s)"
DROP_UNIT_ENTITIES = """
DELETE FROM unit_entities WHERE bank_id = %(bank)s AND unit_id = ANY(%(ids)s)
RETURNING entity_id
"""
# Derived links of a re-retained memory are rebuilt; causal links pointing to it stay.
_DROP_LINKS = """
DELETE FROM memory_links
WHERE bank_id = %(bank)s
  AND (from_unit_id = ANY(%(ids)s)
       OR (to_unit_id = ANY(%(ids)s) AND link_type IN ('semantic', 'temporal')))
"""
_UPSERT_UNIT = """
INSERT INTO memory_units (
    bank_id, id, text, context, fact_type, embedding, occurred_start, occurred_end,
    mentioned_at, tags, proof_count, document_id, document_position, chunk_id, metadata,
    search_vector, search_length)
VALUES (
    %(bank)s, %(id)s, %(text)s, %(context)s, %(fact_type)s, %(embedding)s, %(occurred_start)s,
    %(occurred_end)s, %(mentioned_at)s, %(tags)s, %(proof_count)s, %(document_id)s,
    %(document_position)s, %(chunk_id)s, %(metadata)s,
    to_tsvector(%(language)s::regconfig,
                concat_ws(' ', %(text)s::text, %(context)s::text, %(entity_text)s::text)),
    (SELECT coalesce(sum(coalesce(cardinality(t.positions), 1)), 0)
     FROM unnest(to_tsvector(%(language)s::regconfig,
                 concat_ws(' ', %(text)s::text, %(context)s::text, %(entity_text)s::text))) t))
ON CONFLICT (bank_id, id) DO UPDATE SET
    text = EXCLUDED.text, context = EXCLUDED.context, fact_type = EXCLUDED.fact_type,
    embedding = EXCLUDED.embedding, occurred_start = EXCLUDED.occurred_start,
    occurred_end = EXCLUDED.occurred_end, mentioned_at = EXCLUDED.mentioned_at,
    tags = EXCLUDED.tags, proof_count = EXCLUDED.proof_count,
    document_id = EXCLUDED.document_id,
    document_position = CASE
        WHEN memory_units.document_id = EXCLUDED.document_id
             AND memory_units.document_position IS NOT NULL
        THEN memory_units.document_position
        ELSE EXCLUDED.document_position END,
    chunk_id = EXCLUDED.chunk_id, metadata = EXCLUDED.metadata,
    search_vector = EXCLUDED.search_vector, search_length = EXCLUDED.search_length,
    updated_at = now()
"""
# BM25 statistics: postings and document frequencies move with every (re-)retained memory.
DROP_TERMS = """
WITH gone AS (
    DELETE FROM memory_terms WHERE bank_id = %(bank)s AND unit_id = ANY(%(ids)s) RETURNING term
), counts AS (SELECT term, count(*) AS n FROM gone GROUP BY term)
UPDATE bank_terms b SET df = b.df - counts.n
FROM counts WHERE b.bank_id = %(bank)s AND b.term = counts.term
"""
DROP_UNUSED_TERMS = "DELETE FROM bank_terms WHERE bank_id = %(bank)s AND df <= 0"
# Lexemes over 1 KB (a 2,000-letter "word") are left out: next to a long id they would pass
# btree's row limit in the postings key, and nobody searches for them.
_ADD_TERMS = """
WITH added AS (
    INSERT INTO memory_terms (bank_id, term, unit_id, tf, fact_type, doc_length)
    SELECT u.bank_id, t.lexeme, u.id, coalesce(cardinality(t.positions), 1), u.fact_type,
           u.search_length
    FROM memory_units u CROSS JOIN LATERAL unnest(u.search_vector) t
    WHERE u.bank_id = %(bank)s AND u.id = ANY(%(ids)s) AND octet_length(t.lexeme) <= 1024
    RETURNING term
)
INSERT INTO bank_terms (bank_id, term, df)
SELECT %(bank)s, term, count(*) FROM added GROUP BY term
ON CONFLICT (bank_id, term) DO UPDATE SET df = bank_terms.df + EXCLUDED.df
"""
BANK_TOTALS = """
UPDATE banks SET (doc_count, total_length) = (
    SELECT count(*), coalesce(sum(search_length), 0) FROM memory_units WHERE bank_id = %(bank)s)
WHERE bank_id = %(bank)s
"""
# An import only adds memories: after its first batch's count (which also mends totals left
# wrong by hand or by a store older than them), its totals grow by each batch's instead of
# a count of the whole bank, which made a large import's batches cost more the more it had
# written.
_ADD_TO_TOTALS = """
UPDATE banks b SET (doc_count, total_length) = (
    SELECT b.doc_count + count(*), b.total_length + coalesce(sum(u.search_length), 0)
    FROM memory_units u WHERE u.bank_id = %(bank)s AND u.id = ANY(%(ids)s))
WHERE b.bank_id = %(bank)s
"""
_INSERT_ENTITIES = """
INSERT INTO entities (bank_id, canonical_name, name_key)
SELECT %(bank)s, n.name, n.key FROM unnest(%(names)s::text[], %(keys)s::text[]) AS n(name, key)
ON CONFLICT (bank_id, name_key) DO NOTHING
"""
_INSERT_UNIT_ENTITIES = """
INSERT INTO unit_entities (bank_id, unit_id, entity_id)
SELECT %(bank)s, p.unit_id, e.id
FROM unnest(%(unit_ids)s::text[], %(keys)s::text[]) AS p(unit_id, key)
JOIN entities e ON e.bank_id = %(bank)s AND e.name_key = p.key
ON CONFLICT DO NOTHING
"""
# An import's batches (after the first, see _ADD_TO_TOTALS) grow each entity's count by the
# mentions the batch adds instead of counting all of them again: a recount reads every
# mention of the batch's entities, and a common one's grow with the bank.
_ADD_UNIT_ENTITIES = f"""
WITH added AS ({_INSERT_UNIT_ENTITIES}RETURNING entity_id
), counts AS (SELECT entity_id, count(*) AS n FROM added GROUP BY entity_id)
UPDATE entities e SET mention_count = e.mention_count + counts.n
FROM counts WHERE e.bank_id = %(bank)s AND e.id = counts.entity_id
"""
COUNT_MENTIONS = """
UPDATE entities e
SET mention_count = (SELECT count(*) FROM unit_entities ue
                     WHERE ue.bank_id = %(bank)s AND ue.entity_id = e.id)
WHERE e.bank_id = %(bank)s AND (e.name_key = ANY(%(keys)s) OR e.id = ANY(%(old_ids)s))
"""
DROP_UNUSED_ENTITIES = """
DELETE FROM entities WHERE bank_id = %(bank)s AND id = ANY(%(old_ids)s) AND mention_count = 0
"""
# The bank's size and the version of its row: every write to a bank (retain, import,
# forgetting) updates that row's totals in its transaction, so the row's xmin (the id of
# the transaction that last wrote it) changes with every write, as an optimistic
# concurrency token.
BANK_STATE = """
SELECT (SELECT count(*) FROM memory_units WHERE bank_id = %(bank)s),
       (SELECT xmin::text FROM banks WHERE bank_id = %(bank)s)
"""
BANK_VERSION = "SELECT xmin::text FROM banks WHERE bank_id = %(bank)s"
# Event times as whole microseconds since 1970, which any date converts to exactly.
_BANK_VECTORS = """
SELECT id, embedding, (extract(epoch FROM event_time) * 1000000)::bigint
FROM memory_units WHERE bank_id = %(bank)s
"""
# A re-retained memory's vectors are replaced; with late interaction off it has none.
_DROP_TOKEN_VECTORS = """
DELETE FROM memory_token_vectors WHERE bank_id = %(bank)s AND id = ANY(%(ids)s)
"""
# With a memory's reading in context (hindsight_tools/retain/reading_context.py), where it
# has one, and the memory it was read after.
_INSERT_TOKEN_VECTORS = """
INSERT INTO memory_token_vectors (bank_id, id, vectors, context_vectors, context_of)
VALUES (%(bank)s, %(id)s, %(vectors)s, %(context_vectors)s, %(context_of)s)
ON CONFLICT (bank_id, id) DO UPDATE
SET vectors = EXCLUDED.vectors, context_vectors = EXCLUDED.context_vectors,
    context_of = EXCLUDED.context_of
"""
# A reading in context holds the words of the memory it was read after: when that one is
# forgotten or retained again, the reading goes.
DROP_READINGS_AFTER = """
UPDATE memory_token_vectors SET context_vectors = NULL, context_of = NULL
WHERE bank_id = %(bank)s AND context_of = ANY(%(ids)s)
"""


def retain_plan(
    bank_id: str,
    prepared: Sequence[PreparedItem],
    embeddings: Vectors,
    settings: Settings,
    token_vectors: Sequence[bytes | None] | None = None,
    in_context: Sequence[bytes | None] | None = None,
    before: Mapping[int, Before] | None = None,
) -> Plan[RetainResult]:
    """All writes of one retain call; the caller runs it in a single transaction.
    ``in_context``: each memory's late-interaction vectors read after the memory before it
    in its document, by index, where it has them; ``before``: that memory
    (:mod:`~hindsight_tools.retain.reading_context`)."""
    bank = {"bank": bank_id}
    ids = [p.id for p in prepared]
    before = before or {}
    yield from write_sources(bank_id, prepared)
    positions = yield from positions_plan(bank_id, prepared)

    existing = yield from existing_ids_plan(bank_id, ids)
    old_entity_ids = sorted(
        {row[0] for row in (yield Statement(DROP_UNIT_ENTITIES, {**bank, "ids": ids}))}
    )
    if existing:
        yield Statement(_DROP_LINKS, {**bank, "ids": sorted(existing)}, "none")

    if existing:
        yield Statement(DROP_TERMS, {**bank, "ids": sorted(existing)}, "none")
        yield Statement(DROP_UNUSED_TERMS, bank, "none")
    rows = [
        _unit_params(bank_id, p, embeddings[p.index], settings, positions.get(p.index))
        for p in prepared
    ]
    yield Statement(_UPSERT_UNIT, rows, "many")
    if existing:
        yield Statement(_DROP_TOKEN_VECTORS, {**bank, "ids": sorted(existing)}, "none")
        yield Statement(DROP_READINGS_AFTER, {**bank, "ids": sorted(existing)}, "none")
    if token_vectors is not None:
        readings = stored_readings(in_context, before)
        vector_rows = [
            {
                **bank,
                "id": p.id,
                "vectors": token_vectors[p.index],
                "context_vectors": readings.get(p.index, (None, None))[0],
                "context_of": readings.get(p.index, (None, None))[1],
            }
            for p in prepared
            if token_vectors[p.index] is not None
        ]
        if vector_rows:
            yield Statement(_INSERT_TOKEN_VECTORS, vector_rows, "many")
            yield from drop_stale_readings_plan(bank_id, prepared, before)
    yield from derive(bank_id, prepared, settings, old_entity_ids)
    return RetainResult(
        bank_id=bank_id,
        ids=ids,
        created=sum(1 for i in ids if i not in existing),
        updated=sum(1 for i in ids if i in existing),
    )


def existing_ids_plan(bank_id: str, ids: Sequence[str]) -> Plan[set[str]]:
    """Which of ``ids`` the bank holds already."""
    rows = yield Statement(_EXISTING_IDS, {"bank": bank_id, "ids": list(ids)})
    return {str(row[0]) for row in rows}


@dataclass(frozen=True)
class HeldBank:
    """A bank's memories as an import holds them: ids, embeddings (one row each) and event
    times (microseconds since 1970), and the version of its row (see ``BANK_STATE``; None
    before its first write)."""

    ids: list[str]
    vectors: Vectors
    times: list[int | None]
    version: str | None


def bank_vectors_plan(bank_id: str, limit: int) -> Plan[HeldBank | None]:
    """The bank's memories, or None when it holds more than ``limit``."""
    bank = {"bank": bank_id}
    ((size, version),) = yield Statement(BANK_STATE, bank)
    if size > limit:
        return None
    rows = yield Statement(_BANK_VECTORS, bank)
    if not rows:
        return HeldBank([], np.empty((0, 0), dtype=np.float32), [], version)
    return HeldBank(
        [str(row[0]) for row in rows],
        np.stack([row[1].to_numpy() for row in rows]),
        [None if row[2] is None else int(row[2]) for row in rows],
        version,
    )


def write_sources(bank_id: str, prepared: Sequence[PreparedItem]) -> Plan[None]:
    """The bank lock, the bank row, and the documents and chunks the memories point to."""
    bank = {"bank": bank_id}
    # Concurrent writes into one bank would race on entity rows and chunk numbering.
    yield Statement(LOCK_BANK, bank, "none")
    yield Statement(_INSERT_BANK, bank, "none")
    documents = list(dict.fromkeys(p.document_id for p in prepared if p.document_id))
    if documents:
        yield Statement(_INSERT_DOCUMENTS, {**bank, "documents": documents}, "none")
    chunks = {p.chunk_id: (p.document_id, p.item.chunk) for p in prepared if p.chunk_id is not None}
    for chunk_id, (document_id, text) in chunks.items():
        params = {**bank, "chunk_id": chunk_id, "document_id": document_id, "text": text}
        yield Statement(_INSERT_CHUNK, params, "none")


def derive(
    bank_id: str,
    prepared: Sequence[PreparedItem],
    settings: Settings,
    old_entity_ids: Sequence[int] = (),
    found: links.FoundLinks | None = None,
    added: bool = False,
) -> Plan[None]:
    """What follows from memories just written, set-wise: their keyword postings, their
    entities, their semantic, temporal and causal links (those of ``found`` as they are,
    when the caller found them already), and the bank's totals and its entities' mention
    counts: counted again, or grown by theirs when they are all ``added`` (new to the
    bank)."""
    bank = {"bank": bank_id}
    ids = [p.id for p in prepared]
    yield Statement(_ADD_TERMS, {**bank, "ids": ids}, "none")
    if added:
        yield Statement(_ADD_TO_TOTALS, {**bank, "ids": ids}, "none")
    else:
        yield Statement(BANK_TOTALS, bank, "none")

    names = {entity_key(n): n for p in prepared for n in p.entities}
    pairs = [(p.id, entity_key(n)) for p in prepared for n in p.entities]
    if names:
        yield Statement(
            _INSERT_ENTITIES,
            {**bank, "names": list(names.values()), "keys": list(names.keys())},
            "none",
        )
        mentions = {**bank, "unit_ids": [u for u, _ in pairs], "keys": [k for _, k in pairs]}
        if added:
            yield Statement(_ADD_UNIT_ENTITIES, mentions, "none")
        else:
            yield Statement(_INSERT_UNIT_ENTITIES, mentions, "none")
    if (names and not added) or old_entity_ids:
        counts = {**bank, "keys": list(names.keys()), "old_ids": list(old_entity_ids)}
        yield Statement(COUNT_MENTIONS, counts, "none")
        yield Statement(DROP_UNUSED_ENTITIES, counts, "none")

    if found is not None:
        yield from links.write_found_links(bank_id, ids, found)
    yield from links.link_plan(
        bank_id,
        ids,
        settings,
        semantic=found is None,
        temporal=found is None or not found.with_temporal,
    )
    yield from links.causal_links_plan(bank_id, prepared)


def _unit_params(
    bank_id: str, p: PreparedItem, embedding: Any, settings: Settings, position: int | None
) -> dict[str, Any]:
    item = p.item
    return {
        "bank": bank_id,
        "id": p.id,
        "text": item.text,
        "context": item.context,
        "fact_type": item.fact_type,
        "embedding": embedding,
        "occurred_start": item.occurred_start,
        "occurred_end": item.occurred_end,
        "mentioned_at": item.mentioned_at,
        "tags": list(item.tags),
        "proof_count": item.proof_count,
        "document_id": p.document_id,
        "document_position": position,
        "chunk_id": p.chunk_id,
        "metadata": Json(item.metadata),
        "language": settings.text_search_extension_native_language,
        "entity_text": " ".join(p.entities),
    }

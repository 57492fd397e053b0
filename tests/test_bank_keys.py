"""Keys for sharding by bank: every key includes bank_id, and a store made before migration
0008 moves to those keys without losing a row (docs/scaling.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from psycopg import sql

from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.store import bootstrap as store
from tests.test_store import TinyEmbedder

# Tables of the store that hold no bank's rows: the schema's own records.
STORE_TABLES = {"hindsight_schema_version", "hindsight_meta"}
_KEYS = """
SELECT c.conrelid::regclass::text, c.conname, c.contype,
       array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i),
       c.confrelid::regclass::text,
       array(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i),
       c.confdeltype
FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
WHERE t.relnamespace = 'public'::regnamespace AND c.contype IN ('p', 'u', 'f')
ORDER BY 1, 2
"""
_TABLES = """
SELECT c.relname::text,
       EXISTS (SELECT 1 FROM pg_attribute a
               WHERE a.attrelid = c.oid AND a.attname = 'bank_id' AND NOT a.attisdropped)
FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
"""


def key_problems(conn: psycopg.Connection[tuple[Any, ...]]) -> list[str]:
    """What stands between the schema and sharding by bank_id, one line per problem."""
    tables = dict(conn.execute(_TABLES).fetchall())
    problems = [
        f"table {name} has no bank_id"
        for name, has in tables.items()
        if not has and name not in STORE_TABLES
    ]
    for table, name, kind, columns, target, target_columns, on_delete in conn.execute(_KEYS):
        if table in STORE_TABLES:
            continue
        if "bank_id" not in columns:
            problems.append(f"{table}.{name} ({kind}) leaves out bank_id: {columns}")
        if kind == "f":
            paired = "bank_id" in columns and "bank_id" in target_columns
            if not paired or columns.index("bank_id") != target_columns.index("bank_id"):
                problems.append(f"{table}.{name} does not match bank_id to {target}.bank_id")
            # a sharded PostgreSQL refuses SET NULL / SET DEFAULT on such a key
            if on_delete in ("n", "d"):
                problems.append(f"{table}.{name} sets columns on delete ({on_delete})")
    return problems


# Links, keyword postings and entity mentions carry none (migrations 0009, 0011): the
# engine deletes them with their memories.
_KEYLESS = """
SELECT count(*) FROM pg_constraint WHERE contype = 'f'
  AND conrelid IN ('memory_links'::regclass, 'memory_terms'::regclass,
                   'unit_entities'::regclass)
"""


def test_every_key_of_a_new_store_includes_the_bank(
    db: psycopg.Connection[tuple[Any, ...]],
) -> None:
    assert key_problems(db) == []
    assert db.execute(_KEYLESS).fetchone() == (0,)


# Before 0008 the store was keyed for one server: entities by id alone. The old store is
# written by today's engine, so it has the columns today's statements name, which 0008 to
# 0012 do not touch (0013: token vectors in context; 0014: positions in documents).
BEFORE = [version for version, _ in store.MIGRATIONS if version < 8 or version in (13, 14)]
ITEMS: list[dict[str, Any]] = [
    {
        "id": "m1",
        "text": "Melanie painted a lake at sunrise in Portland",
        "entities": ["Melanie", "Portland"],
        "document_id": "journal",
        "chunk": "Melanie painted a lake at sunrise. She took the bus home.",
        "tags": ["art"],
        "metadata": {"mood": "calm", "n": 1},
        "occurred_start": datetime(2023, 5, 7, 9, tzinfo=UTC),
    },
    {
        "id": "m2",
        "text": "Caroline went to the LGBTQ support group in Portland",
        "entities": ["Caroline", "Portland"],
        "mentioned_at": datetime(2023, 5, 8, 12, tzinfo=UTC),
        "causal_links": [{"target_id": "m1", "link_type": "caused_by", "weight": 0.6}],
    },
    {
        "id": "m3",
        "text": "Melanie and Caroline planned a camping trip",
        "fact_type": "experience",
        "entities": ["Melanie", "Caroline"],
        "mentioned_at": datetime(2023, 5, 8, 13, tzinfo=UTC),
    },
]
QUERIES = ["What did Melanie paint?", "Who went to Portland in May 2023?", "camping trip"]
_ORDER = {
    "banks": "bank_id",
    "documents": "bank_id, document_id",
    "chunks": "bank_id, chunk_id",
    "memory_units": "bank_id, id",
    "memory_token_vectors": "bank_id, id",
    "entities": "bank_id, id",
    "unit_entities": "bank_id, unit_id, entity_id",
    "memory_links": "bank_id, from_unit_id, to_unit_id, link_type",
    "memory_terms": "bank_id, term, unit_id",
    "bank_terms": "bank_id, term",
}


def _snapshot(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every bank table, as text, in key order."""
    with psycopg.connect(url) as conn:
        return {
            table: conn.execute(
                sql.SQL("SELECT t::text FROM {} t ORDER BY {}").format(
                    sql.Identifier(table), sql.SQL(order)
                )
            ).fetchall()
            for table, order in _ORDER.items()
        }


def _answers(engine: MemoryEngine, banks: list[str]) -> dict[str, Any]:
    return {
        f"{bank}/{query}": [m.id for m in engine.recall(bank, query, budget="high").memories]
        for bank in banks
        for query in QUERIES
    } | {bank: engine.get_memories(bank, ["m1", "m2", "m3"]) for bank in banks}


def test_a_store_from_before_the_bank_keys_migrates_without_losing_anything(
    settings: Settings, scratch_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    banks = ["alpha", "beta"]
    with monkeypatch.context() as old:
        old.setattr(store, "MIGRATIONS", tuple(m for m in store.MIGRATIONS if m[0] in BEFORE))
        with MemoryEngine(scratch_db, settings=settings, embedder=TinyEmbedder()) as engine:
            for bank in banks:
                engine.retain(bank, ITEMS)
            # a retain again and a delete leave unused entity ids behind them
            engine.retain("alpha", [{**ITEMS[0], "entities": ["Melanie", "Seattle"]}])
            engine.retain("beta", [{"id": "gone", "text": "Nothing to see", "entities": ["X"]}])
            assert engine.delete_memories("beta", ["gone"]) == 1
            before = _answers(engine, banks)
        with psycopg.connect(scratch_db) as conn:
            assert key_problems(conn) != []  # the old keys really are the old ones
    rows = _snapshot(scratch_db)
    assert all(rows[t] for t in _ORDER), "every table holds rows before the migration"

    after = [version for version, _ in store.MIGRATIONS if version not in BEFORE]
    assert store.bootstrap(scratch_db, TinyEmbedder.dimension, TinyEmbedder.name) == after

    assert _snapshot(scratch_db) == rows
    with psycopg.connect(scratch_db) as conn:
        assert key_problems(conn) == []
        assert conn.execute(_KEYLESS).fetchone() == (0,)
    with MemoryEngine(scratch_db, settings=settings, embedder=TinyEmbedder()) as engine:
        assert _answers(engine, banks) == before
        # and the migrated store keeps working: writes, entity counts, deletes
        engine.retain(
            "alpha", [{"id": "m4", "text": "Melanie ran a race", "entities": ["Melanie"]}]
        )
        assert "Melanie" in engine.get_memories("alpha", ["m4"])[0].entities
        assert engine.delete_document("alpha", "journal") == 1
        assert engine.delete_bank("beta")
    with psycopg.connect(scratch_db) as conn:
        names = conn.execute(
            "SELECT canonical_name, mention_count FROM entities WHERE bank_id = 'alpha'"
            " ORDER BY canonical_name"
        ).fetchall()
        assert names == [("Caroline", 2), ("Melanie", 2), ("Portland", 1)]
        # nothing of the deleted bank is left, in the tables without foreign keys either
        left = {
            table: conn.execute(
                sql.SQL("SELECT count(*) FROM {} WHERE bank_id = 'beta'").format(
                    sql.Identifier(table)
                )
            ).fetchone()
            for table in _ORDER
        }
        assert left == dict.fromkeys(_ORDER, (0,))


def test_a_backfill_of_the_whole_store_works_one_bank_at_a_time(
    settings: Settings, scratch_db: str
) -> None:
    with MemoryEngine(scratch_db, settings=settings, embedder=TinyEmbedder()) as engine:
        if not engine.late_interaction:
            pytest.fail("the late-interaction model ships with the package; it must load")
        for bank in ("alpha", "beta", "gamma"):
            engine.retain(bank, ITEMS)
        with psycopg.connect(scratch_db) as conn:
            conn.execute("DELETE FROM memory_token_vectors WHERE bank_id <> 'beta'")
        # a batch of 4 takes alpha's 3 and one of gamma's, the next batch gamma's other 2
        assert engine.backfill_token_vectors(batch=4) == 6
        with psycopg.connect(scratch_db) as conn:
            assert conn.execute("SELECT count(*) FROM memory_token_vectors").fetchone() == (9,)

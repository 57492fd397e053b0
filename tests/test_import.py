"""Bulk import against the real store: the same rows as retain, given vectors kept, atomic
batches, resuming, and errors that name the item."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector

from hindsight_tools import (
    EmbedderError,
    InvalidRequestError,
    MemoryEngine,
    Settings,
    StoreError,
)
from hindsight_tools.store.deferred_indexes import DEFERRED_INDEXES
from tests.conftest import BANK_TABLES, count, deferred_indexes
from tests.test_cli import cli

Conn = psycopg.Connection[tuple[Any, ...]]
PEOPLE = ["Melanie", "Caroline", "Jon", "Priya"]
PLACES = ["Portland", "the Dolomites", "Lisbon", "the lake"]


def _items(n: int, start: int = 0) -> list[dict[str, Any]]:
    """Memories with everything derived from them: entities, dates a few hours apart
    (temporal links), near-repeats (semantic links), tags, metadata, chunks."""
    items = []
    for i in range(start, start + n):
        person, place = PEOPLE[i % 4], PLACES[(i // 4) % 4]
        items.append(
            {
                "id": f"m{i:04d}",
                "text": f"{person} went to {place} and painted the view, visit {i % 7}",
                "occurred_start": datetime(2023, 5, 1, tzinfo=UTC) + timedelta(hours=5 * i),
                "tags": [f"t{i % 3}"],
                "metadata": {"i": i, "person": person},
                "document_id": f"session-{i // 10}",
                "chunk": f"Session {i // 10}: {person} talked about {place}.",
            }
        )
    return items


def _bank_rows(db: Conn, bank: str) -> dict[str, list[tuple[Any, ...]]]:
    """Everything a bank holds, without its name, write times or generated entity ids."""
    queries = {
        "memory_units": "SELECT id, text, context, fact_type, embedding::text, occurred_start,"
        " occurred_end, mentioned_at, tags, proof_count, document_id, chunk_id, metadata::text,"
        " search_vector::text, search_length FROM memory_units WHERE bank_id = %s ORDER BY id",
        "memory_token_vectors": "SELECT id, md5(vectors) FROM memory_token_vectors"
        " WHERE bank_id = %s ORDER BY id",
        "entities": "SELECT canonical_name, name_key, mention_count FROM entities"
        " WHERE bank_id = %s ORDER BY name_key",
        "unit_entities": "SELECT ue.unit_id, e.name_key FROM unit_entities ue JOIN entities e"
        " ON e.bank_id = ue.bank_id AND e.id = ue.entity_id WHERE ue.bank_id = %s ORDER BY 1, 2",
        "memory_links": "SELECT from_unit_id, to_unit_id, link_type, weight"
        " FROM memory_links WHERE bank_id = %s ORDER BY 1, 2, 3",
        "memory_terms": "SELECT term, unit_id, tf, fact_type, doc_length FROM memory_terms"
        " WHERE bank_id = %s ORDER BY 1, 2",
        "bank_terms": "SELECT term, df FROM bank_terms WHERE bank_id = %s ORDER BY 1",
        "chunks": "SELECT chunk_id, document_id, chunk_text FROM chunks WHERE bank_id = %s"
        " ORDER BY 1",
        "banks": "SELECT doc_count, total_length FROM banks WHERE bank_id = %s",
    }
    return {table: db.execute(q, (bank,)).fetchall() for table, q in queries.items()}


def test_an_import_stores_what_retain_stores(
    engine: MemoryEngine, bank: str, other_bank: str, db: Conn
) -> None:
    items = _items(40)
    for start in range(0, 40, 15):  # the same batches: the model's vectors vary by batch
        engine.retain(other_bank, items[start : start + 15])
    result = engine.import_memories(bank, items, batch_size=15)
    assert (result.imported, result.skipped, result.batches) == (40, 0, 3)
    assert result.last_id == "m0039"
    imported, retained = _bank_rows(db, bank), _bank_rows(db, other_bank)
    assert imported["memory_links"], "the data is meant to make links"
    assert {t for *_, t, _ in imported["memory_links"]} == {"semantic", "temporal"}
    _assert_same_rows(imported, retained)


def _assert_same_rows(
    found: dict[str, list[tuple[Any, ...]]], expected: dict[str, list[tuple[Any, ...]]]
) -> None:
    """The same rows; link weights up to float32 rounding (an import computes semantic
    similarities in its own process, retain in pgvector)."""
    assert found.keys() == expected.keys()
    for table, rows in expected.items():
        if table == "memory_links":
            assert [row[:3] for row in found[table]] == [row[:3] for row in rows]
            weights = [row[3] for row in rows]
            assert [row[3] for row in found[table]] == pytest.approx(weights, abs=1e-5)
        else:
            assert found[table] == rows, table


def _holding(limit: int) -> Any:
    """A fixture: an engine on the session's database whose imports hold at most
    ``limit`` memories' vectors (0: every link found in SQL, as retain)."""

    @pytest.fixture
    def holding(settings: Settings, engine: MemoryEngine) -> Iterator[MemoryEngine]:
        own = settings.with_overrides(
            {"database_url": engine.database_url, "import_link_exact_max_units": limit}
        )
        with MemoryEngine(settings=own, embedder=engine._core.embedder) as other:
            yield other

    return holding


def test_given_embeddings_are_kept_and_late_interaction_is_left_to_the_backfill(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((3, 384)).astype(np.float32)
    items = [
        {"id": f"v{i}", "text": f"Note {i} about the garden", "embedding": vectors[i].tolist()}
        for i in range(3)
    ] + [{"id": "plain", "text": "A note with no vector of its own"}]
    engine.import_memories(bank, items, embedding_model="all-MiniLM-L6-v2")
    register_vector(db)
    stored: dict[str, Any] = dict(
        db.execute("SELECT id, embedding FROM memory_units WHERE bank_id = %s", (bank,)).fetchall()
    )
    for i in range(3):
        np.testing.assert_array_equal(stored[f"v{i}"].to_numpy(), vectors[i])
    own = engine._core.embedder.embed(["A note with no vector of its own"])[0]
    np.testing.assert_allclose(stored["plain"].to_numpy(), own, atol=1e-5)
    assert count(db, "memory_token_vectors", bank) == 1  # the one the engine embedded
    assert engine.backfill_token_vectors(bank) == 3
    assert count(db, "memory_token_vectors", bank) == 4


def test_retain_takes_a_given_embedding_too(engine: MemoryEngine, bank: str, db: Conn) -> None:
    vector = np.zeros(384, dtype=np.float32)
    vector[5] = 1.0
    engine.retain(bank, [{"id": "a", "text": "Bob likes tea", "embedding": vector.tolist()}])
    register_vector(db)
    rows = db.execute("SELECT embedding FROM memory_units WHERE bank_id = %s", (bank,)).fetchall()
    assert len(rows) == 1
    np.testing.assert_array_equal(rows[0][0].to_numpy(), vector)
    assert count(db, "memory_token_vectors", bank) == 0


def test_an_interrupted_import_keeps_its_committed_batches_and_resumes(
    engine: MemoryEngine, bank: str, other_bank: str, db: Conn
) -> None:
    items = _items(50)

    def cut_short() -> Iterator[dict[str, Any]]:
        yield from items[:25]
        raise OSError("the export file went away")  # while reading the third batch

    with pytest.raises(OSError, match="went away"):
        engine.import_memories(bank, cut_short(), batch_size=10)
    assert count(db, "memory_units", bank) == 20  # two batches, nothing of the third
    resumed = engine.import_memories(bank, items, batch_size=10)
    assert (resumed.imported, resumed.skipped) == (30, 20)
    engine.import_memories(other_bank, items, batch_size=10)
    _assert_same_rows(_bank_rows(db, bank), _bank_rows(db, other_bank))


def test_a_failing_batch_leaves_the_earlier_ones_and_nothing_of_itself(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    items = _items(20)
    items[14] = {**items[14], "causal_links": [{"target_id": "nowhere"}]}
    with pytest.raises(InvalidRequestError, match=r"items\[14\]\.causal_links\[0\]\.target_id"):
        engine.import_memories(bank, items, batch_size=10)
    assert count(db, "memory_units", bank) == 10
    stored = db.execute("SELECT id FROM memory_units WHERE bank_id = %s", (bank,)).fetchall()
    assert {row[0] for row in stored} == {f"m{i:04d}" for i in range(10)}


def test_a_database_failure_in_a_batch_rolls_that_batch_back(
    settings: Settings, engine: MemoryEngine, bank: str, db: Conn
) -> None:
    broken = settings.with_overrides({"database_url": engine.database_url})
    broken = broken.model_copy(update={"text_search_extension_native_language": "klingon"})
    with MemoryEngine(settings=broken) as other, pytest.raises(StoreError, match="klingon"):
        other.import_memories(bank, _items(5))
    assert all(count(db, table, bank) == 0 for table in BANK_TABLES)


def test_bad_vectors_are_refused_naming_the_item_in_the_whole_stream(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    items = _items(12)
    items[11] = {**items[11], "embedding": [0.1] * 383}
    with pytest.raises(InvalidRequestError) as caught:
        engine.import_memories(bank, items, batch_size=5)
    assert "items[11].embedding" in str(caught.value)
    assert "384" in str(caught.value)
    assert count(db, "memory_units", bank) == 10
    for bad, where in (
        ([float("nan")] * 384, "items[0].embedding"),
        ([0.0] * 384, "items[0].embedding"),
        ([1e39] * 384, "items[0].embedding"),  # beyond float32, the stored type
        ([1e-46] * 384, "items[0].embedding"),  # zero once stored as float32
        ([], "items[0].embedding"),
        ("not a vector", "items[0].embedding"),
    ):
        with pytest.raises(InvalidRequestError, match=where.replace("[", r"\[")):
            engine.retain(bank, [{"text": "x", "embedding": bad}])
    with pytest.raises(InvalidRequestError, match="embedding_model") as caught:
        engine.import_memories(
            bank, [{"text": "x", "embedding": [0.1] * 384}], embedding_model="bge-small-en"
        )
    assert "sentence-transformers/all-MiniLM-L6-v2" in str(caught.value)
    with pytest.raises(InvalidRequestError, match="not a single item"):
        engine.import_memories(bank, {"text": "one memory, not a list"})  # type: ignore[dict-item]
    for batch_size in (0, -1, 10_001, True, 2.5):
        with pytest.raises(InvalidRequestError, match="batch_size"):
            engine.import_memories(bank, _items(1), batch_size=batch_size)  # type: ignore[arg-type]


def test_a_stated_model_other_than_the_stores_is_refused_before_anything_is_written(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    items = _items(30)
    items[25] = {**items[25], "embedding": [0.1] * 384}
    with pytest.raises(InvalidRequestError, match="embedding_model"):
        engine.import_memories(bank, items, batch_size=10, embedding_model="bge-small-en")
    assert count(db, "memory_units", bank) == 0


def test_a_repeated_id_is_skipped_whether_in_one_batch_or_another(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    items = [
        {"id": "a", "text": "Jon opened a dance studio", "document_id": "d1", "chunk": "c1"},
        {"id": "b", "text": "Jon sold the car"},
        {"id": "a", "text": "Jon closed the studio", "document_id": "d2", "chunk": "c2"},
    ]
    for batch_size in (2, 10):
        result = engine.import_memories(bank, items, batch_size=batch_size)
        assert (result.imported, result.skipped) == (2, 1), batch_size
        assert result.last_id == "b"
        (stored,) = engine.get_memories(bank, ["a"])
        assert stored.text == "Jon opened a dance studio"
        assert count(db, "chunks", bank) == 1  # nothing written for the repeat
        engine.delete_bank(bank)


class _FailsAfter:
    """The real embedder, failing from its ``calls + 1``-th call on (the model's memory ran
    out, say); it keeps the real model's name, which the store checks."""

    def __init__(self, inner: Any, calls: int) -> None:
        self.inner, self.left = inner, calls
        self.name, self.dimension = inner.name, inner.dimension

    def embed(self, texts: Any) -> Any:
        self.left -= 1
        if self.left < 0:
            raise MemoryError("the model ran out of memory")
        return self.inner.embed(texts)


def test_a_batch_whose_encoding_fails_still_lets_the_one_before_it_be_written(
    settings: Settings, engine: MemoryEngine, bank: str, db: Conn
) -> None:
    flaky = _FailsAfter(engine._core.embedder, calls=1)
    own = settings.with_overrides({"database_url": engine.database_url})
    with MemoryEngine(settings=own, embedder=flaky) as other:
        with pytest.raises(EmbedderError, match="ran out of memory"):
            other.import_memories(bank, _items(30), batch_size=10)
        assert count(db, "memory_units", bank) == 10
        flaky.left = 1

        async def run() -> None:
            try:
                await other.aio.import_memories(bank, _items(30), batch_size=10)
            finally:
                await other.aio.close()

        with pytest.raises(EmbedderError, match="ran out of memory"):
            asyncio.run(run())  # ten skipped as stored, ten encoded and written, ten failing
        assert count(db, "memory_units", bank) == 20


def test_items_without_ids_get_content_ids_so_a_rerun_skips_them(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    items = [{"text": "Jon opened a dance studio"}, {"text": "Jon sold the car"}] * 2
    first = engine.import_memories(bank, items)
    assert (first.imported, first.skipped) == (2, 2)  # the repeats are one memory each
    again = engine.import_memories(bank, items)
    assert (again.imported, again.skipped) == (0, 4)
    assert count(db, "memory_units", bank) == 2
    changed = engine.import_memories(bank, [{"text": "Jon sold the car", "tags": ["x"]}])
    assert changed.imported == 1  # another item, another id


def test_the_async_twin_imports_the_same(
    engine: MemoryEngine, bank: str, other_bank: str, db: Conn
) -> None:
    items = _items(25)

    async def run() -> None:
        try:
            result = await engine.aio.import_memories(bank, iter(items), batch_size=10)
            assert (result.imported, result.batches) == (25, 3)
        finally:
            await engine.aio.close()

    asyncio.run(run())
    engine.import_memories(other_bank, items, batch_size=10)
    _assert_same_rows(_bank_rows(db, bank), _bank_rows(db, other_bank))


def test_import_from_the_command_line_resumes(
    settings: Settings,
    engine: MemoryEngine,
    bank: str,
    tmp_path: Path,
    db: Conn,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(3)
    path = tmp_path / "export.jsonl"
    with path.open("w") as out:
        for i, item in enumerate(_items(30)):
            vector = rng.standard_normal(384).tolist() if i % 2 else None
            record = {**item, "occurred_start": item["occurred_start"].isoformat()}
            out.write(json.dumps({**record, "embedding": vector} if vector else record) + "\n")
    with path.open() as lines:
        head = tmp_path / "head.jsonl"
        head.write_text("".join(next(lines) for _ in range(12)))
    done = cli(settings, "import", str(head), "--bank", bank, "--batch-size", "5")
    assert done.returncode == 0, done.stderr
    assert "imported 12 memories" in done.stdout
    assert "ANALYZE" not in done.stdout  # fewer than HINDSIGHT_API_IMPORT_ANALYZE_MIN
    args = ("import", str(path), "--bank", bank, "--batch-size", "5", "--defer-indexes")
    monkeypatch.setenv("HINDSIGHT_API_IMPORT_ANALYZE_MIN", "18")
    done = cli(settings, *args)
    assert done.returncode == 0, done.stderr
    assert "imported 18 memories" in done.stdout and "skipped 12" in done.stdout
    assert "search indexes were set aside for the load and built after it" in done.stdout
    assert "brought up to date for the planner (ANALYZE)" in done.stdout
    assert len(deferred_indexes(db)) == len(DEFERRED_INDEXES)
    assert f"run hindsight-tools backfill --bank {bank}" in done.stdout
    assert count(db, "memory_units", bank) == 30
    assert count(db, "memory_token_vectors", bank) == 15  # the lines without a vector
    done = cli(settings, "backfill", "--bank", bank)
    assert done.returncode == 0, done.stderr
    assert "for 15 memories" in done.stdout
    assert count(db, "memory_token_vectors", bank) == 30
    refused = cli(settings, "import", str(path), "--bank", bank, "--embedding-model", "other")
    assert refused.returncode == 2 and "embedding_model" in refused.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n\n{"text": "wrong type", "fact_type": "fact"}\n')
    refused = cli(settings, "import", str(bad), "--bank", bank)
    assert refused.returncode == 2
    assert f"{bad}:3 (items[1].fact_type)" in refused.stderr, refused.stderr
    assert "'world', 'experience' or 'observation'" in refused.stderr


def _estimated_rows(conn: Conn, bank: str) -> int:
    """How many of ``bank``'s memories the planner expects (it plans every arm on this)."""
    row = conn.execute(
        "EXPLAIN (FORMAT JSON) SELECT id FROM memory_units WHERE bank_id = %s", (bank,)
    ).fetchone()
    assert row is not None
    return int(row[0][0]["Plan"]["Plan Rows"])


def test_a_large_import_tells_the_planner_the_banks_size(
    settings: Settings, scratch_db: str
) -> None:
    from tests.test_store import TinyEmbedder

    rng = np.random.default_rng(3)

    def notes(prefix: str, n: int) -> list[dict[str, Any]]:
        vectors = rng.standard_normal((n, 8))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return [
            {"id": f"{prefix}{i}", "text": f"Note {i} about the garden", "embedding": v.tolist()}
            for i, v in enumerate(vectors)
        ]

    analyze_from_300 = settings.with_overrides({"import_analyze_min": 300})
    with (
        MemoryEngine(scratch_db, settings=analyze_from_300, embedder=TinyEmbedder()) as engine,
        psycopg.connect(scratch_db, autocommit=True) as conn,
    ):
        # the statistics must change only by the imports' own ANALYZE, not autovacuum's
        conn.execute("ALTER TABLE memory_units SET (autovacuum_enabled = off)")
        assert engine.import_memories("first", notes("f", 1500)).analyzed
        below = engine.import_memories("small", notes("s", 200))
        assert not below.analyzed
        assert _estimated_rows(conn, "small") < 20  # a bank the statistics don't know
        above = engine.import_memories("large", notes("l", 600))
        assert above.analyzed
        assert 300 <= _estimated_rows(conn, "large") <= 1200

"""The write path against the real PostgreSQL and the real embedding model."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg
import pytest

from hindsight_tools import InvalidRequestError, MemoryEngine, MemoryItem, Settings, StoreError
from tests.conftest import BANK_TABLES, count

Conn = psycopg.Connection[tuple[Any, ...]]


def links(db: Conn, bank: str, link_type: str) -> dict[tuple[str, str], float]:
    rows = db.execute(
        "SELECT from_unit_id, to_unit_id, weight FROM memory_links"
        " WHERE bank_id = %s AND link_type = %s",
        (bank, link_type),
    ).fetchall()
    return {(r[0], r[1]): float(r[2]) for r in rows}


def test_retain_returns_ids_in_order_and_generates_missing_ones(
    engine: MemoryEngine, bank: str
) -> None:
    result = engine.retain(bank, [{"id": "a", "text": "Alpha"}, {"text": "Beta"}])
    assert result.ids[0] == "a"
    assert len(result.ids) == 2 and result.ids[1] and result.ids[1] != "a"
    assert (result.created, result.updated) == (2, 0)


def test_retaining_an_id_again_updates_instead_of_duplicating(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    engine.retain(bank, [MemoryItem(id="m1", text="Alice works at Google", tags=["work"])])
    again = engine.retain(bank, [MemoryItem(id="m1", text="Alice works at Apple", tags=["job"])])
    assert (again.created, again.updated) == (0, 1)
    assert count(db, "memory_units", bank) == 1
    row = db.execute(
        "SELECT text, tags FROM memory_units WHERE bank_id = %s AND id = 'm1'", (bank,)
    ).fetchone()
    assert row == ("Alice works at Apple", ["job"])
    names = {
        r[0] for r in db.execute("SELECT canonical_name FROM entities WHERE bank_id = %s", (bank,))
    }
    assert names == {"Alice", "Apple"}  # Google lost its only mention and is gone


def test_metadata_comes_back_exactly(engine: MemoryEngine, bank: str) -> None:
    metadata = {"z": 1, "a": [1.5, None, True], "nested": {"k": "v\u0000x"}, "big": 2**70}
    engine.retain(bank, [MemoryItem(id="m", text="Metadata holder", metadata=metadata)])
    memory = engine.recall(bank, "Metadata holder").memories[0]
    assert memory.metadata == metadata
    assert list(memory.metadata) == ["z", "a", "nested", "big"]


def test_given_entities_are_used_and_missing_ones_extracted(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    engine.retain(
        bank,
        [
            {"id": "given", "text": "she joined the team", "entities": ["Alice Smith", "ACME"]},
            {"id": "none", "text": "Bob met Carol", "entities": []},
            {"id": "extracted", "text": "Yesterday Bob visited Alice Smith in Berlin."},
        ],
    )
    rows = db.execute(
        "SELECT ue.unit_id, e.canonical_name, e.mention_count FROM unit_entities ue"
        " JOIN entities e ON e.id = ue.entity_id WHERE ue.bank_id = %s",
        (bank,),
    ).fetchall()
    by_unit: dict[str, set[str]] = {}
    for unit, name, _ in rows:
        by_unit.setdefault(unit, set()).add(name)
    assert by_unit["given"] == {"Alice Smith", "ACME"}
    assert "none" not in by_unit
    assert {"Bob", "Alice Smith", "Berlin"} <= by_unit["extracted"]
    mentions = {name: n for _, name, n in rows}
    assert mentions["Alice Smith"] == 2 and mentions["ACME"] == 1


def test_entity_names_are_one_per_bank_whatever_the_case(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    engine.retain(
        bank,
        [
            {"text": "x", "entities": ["New  York"]},
            {"text": "y", "entities": ["new york"]},
        ],
    )
    assert count(db, "entities", bank) == 1


def test_chunks_are_stored_once_per_document_and_text(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    source = "Alice: I moved to Zurich.\nBob: Nice!"
    engine.retain(
        bank,
        [
            {"id": "1", "text": "Alice moved to Zurich", "document_id": "d1", "chunk": source},
            {"id": "2", "text": "Bob said nice", "document_id": "d1", "chunk": source},
        ],
    )
    engine.retain(bank, [{"id": "3", "text": "Later", "document_id": "d1", "chunk": source}])
    engine.retain(
        bank, [{"id": "4", "text": "Other", "document_id": "d1", "chunk": "Another part"}]
    )
    chunks = db.execute(
        "SELECT chunk_id, chunk_index FROM chunks WHERE bank_id = %s ORDER BY chunk_index", (bank,)
    ).fetchall()
    assert [index for _, index in chunks] == [0, 1]
    units: dict[str, str] = dict(
        db.execute("SELECT id, chunk_id FROM memory_units WHERE bank_id = %s", (bank,)).fetchall()
    )
    assert units["1"] == units["2"] == units["3"] == chunks[0][0]
    assert units["4"] == chunks[1][0]


def test_semantic_links_carry_the_cosine_similarity(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    texts = {
        "cat1": "My cat loves sleeping on the sofa all afternoon.",
        "cat2": "My cat loves to sleep on the couch every afternoon.",
        "tax": "The quarterly tax filing deadline is next Tuesday.",
    }
    engine.retain(bank, [{"id": k, "text": v} for k, v in texts.items()])
    embedder = engine._core.embedder
    vectors = dict(zip(texts, embedder.embed(list(texts.values())), strict=True))
    semantic = links(db, bank, "semantic")
    similarity = float(np.dot(vectors["cat1"], vectors["cat2"]))
    assert similarity >= 0.7
    weight = semantic.get(("cat1", "cat2")) or semantic[("cat2", "cat1")]
    assert weight == pytest.approx(similarity, abs=1e-3)
    assert all("tax" not in pair for pair in semantic)  # below 0.7 with both


def test_temporal_links_weight_and_cap(engine: MemoryEngine, bank: str, db: Conn) -> None:
    engine.retain(
        bank,
        [
            {"id": "t0", "text": "Morning run", "occurred_start": "2024-01-01T00:00:00Z"},
            {"id": "t6", "text": "Lunch with Dana", "occurred_start": "2024-01-01T06:00:00Z"},
            {"id": "t18", "text": "Late movie", "occurred_start": "2024-01-01T18:00:00Z"},
            {"id": "far", "text": "Next week trip", "occurred_start": "2024-01-09T00:00:00Z"},
            {"id": "undated", "text": "Likes tea"},
        ],
    )
    temporal = links(db, bank, "temporal")
    assert temporal[("t0", "t6")] == pytest.approx(1 - 6 / 24)
    assert temporal[("t0", "t18")] == pytest.approx(0.3)  # 1 - 18/24 = 0.25, floored at 0.3
    assert not any("far" in pair or "undated" in pair for pair in temporal)

    crowd = [
        {
            "id": f"c{i}",
            "text": f"Crowd event {i}",
            "occurred_start": f"2024-03-01T{i % 24:02d}:00:00Z",
        }
        for i in range(30)
    ]
    engine.retain(bank, crowd)
    out_degree = db.execute(
        "SELECT max(n) FROM (SELECT count(*) AS n FROM memory_links WHERE bank_id = %s"
        " AND link_type = 'temporal' GROUP BY from_unit_id) d",
        (bank,),
    ).fetchone()
    assert out_degree == (20,)


def test_temporal_links_are_each_memorys_nearest_in_time(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    # Dense and tied times on both sides of each memory; a neighbour exactly a day away
    # (51 and 75); and 25 memories at one instant an hour after another, so that a group
    # of ties is cut at the 20th link on either side. Every memory's links must be the 20
    # nearest within a day, ties by id, as an ordering of the whole window would give.
    hours = [(i * 7) % 31 for i in range(45)] + [40, 47, 48, 49, 51, 75, 200] + [201] * 25
    items = [
        {
            "id": f"m{i:02d}",
            "text": f"Entry {i}",
            "occurred_start": f"2024-05-{1 + h // 24:02d}T{h % 24:02d}:00:00Z",
        }
        for i, h in enumerate(hours)
    ]
    engine.retain(bank, items)
    at = {f"m{i:02d}": h for i, h in enumerate(hours)}
    stored: dict[str, set[str]] = {}
    for source, target in db.execute(
        "SELECT from_unit_id, to_unit_id FROM memory_links"
        " WHERE bank_id = %s AND link_type = 'temporal'",
        (bank,),
    ).fetchall():
        stored.setdefault(source, set()).add(target)
    for source, h in at.items():
        near = sorted(
            (abs(other - h), target)
            for target, other in at.items()
            if target != source and abs(other - h) <= 24
        )
        assert stored.get(source, set()) == {target for _, target in near[:20]}, source


def test_causal_links_are_stored_with_their_type(engine: MemoryEngine, bank: str, db: Conn) -> None:
    engine.retain(bank, [{"id": "job", "text": "Alice got a job in Zurich"}])
    engine.retain(
        bank,
        [
            {
                "id": "move",
                "text": "Alice moved to Zurich",
                "causal_links": [{"target_id": "job", "link_type": "caused_by"}],
            }
        ],
    )
    assert links(db, bank, "caused_by") == {("move", "job"): 1.0}


def test_causal_link_to_a_missing_memory_rolls_back_everything(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        engine.retain(
            bank,
            [
                {"id": "ok", "text": "A perfectly fine memory", "document_id": "d", "chunk": "src"},
                {"id": "bad", "text": "Points nowhere", "causal_links": [{"target_id": "ghost"}]},
            ],
        )
    assert "items[1].causal_links[0].target_id" in str(caught.value)
    assert all(count(db, table, bank) == 0 for table in BANK_TABLES)


def test_a_database_failure_mid_write_leaves_nothing(
    settings: Settings, engine: MemoryEngine, bank: str, db: Conn
) -> None:
    broken = settings.model_copy(update={"text_search_extension_native_language": "klingon"})
    with (
        MemoryEngine(engine.database_url, settings=broken) as other,
        pytest.raises(StoreError, match="klingon"),
    ):
        other.retain(bank, [{"text": "First", "document_id": "d", "chunk": "c"}])
    assert all(count(db, table, bank) == 0 for table in BANK_TABLES)


def test_delete_bank_removes_everything_of_that_bank_only(engine: MemoryEngine, db: Conn) -> None:
    items: list[dict[str, Any]] = [
        {
            "id": "a",
            "text": "Alice met Bob in Paris",
            "document_id": "d",
            "chunk": "x",
            "occurred_start": "2024-01-01",
        },
        {
            "id": "b",
            "text": "Alice met Bob in Paris again",
            "occurred_start": "2024-01-01",
            "causal_links": [{"target_id": "a"}],
        },
    ]
    engine.retain("del-one", items)
    engine.retain("del-two", items)
    assert engine.delete_bank("del-one") is True
    assert all(count(db, table, "del-one") == 0 for table in BANK_TABLES)
    assert count(db, "memory_units", "del-two") == 2
    assert count(db, "memory_links", "del-two") > 0
    assert engine.delete_bank("del-one") is False
    engine.delete_bank("del-two")


def test_same_ids_in_two_banks_are_separate_memories(engine: MemoryEngine, db: Conn) -> None:
    try:
        engine.retain("iso-a", [{"id": "m", "text": "Alice lives in Oslo", "entities": ["Alice"]}])
        engine.retain("iso-b", [{"id": "m", "text": "Alice lives in Lima", "entities": ["Alice"]}])
        a = engine.recall("iso-a", "Where does Alice live?").memories
        b = engine.recall("iso-b", "Where does Alice live?").memories
        assert [m.text for m in a] == ["Alice lives in Oslo"]
        assert [m.text for m in b] == ["Alice lives in Lima"]
        assert count(db, "entities", "iso-a") == count(db, "entities", "iso-b") == 1
    finally:
        engine.delete_bank("iso-a")
        engine.delete_bank("iso-b")

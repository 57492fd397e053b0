"""The links an import finds in its own process against the store: the same rows as
retain's SQL at every limit of the temporal links, links a hand-made delete left behind
giving way, and the SQL path taking over when the bank changes beside the import or
outgrows what it holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.retain import links
from tests.conftest import count
from tests.test_import import _assert_same_rows, _bank_rows, _holding, _items

Conn = psycopg.Connection[tuple[Any, ...]]


def _crowded(moment: datetime) -> list[dict[str, Any]]:
    """Memories crowding the temporal links' limits: more at one moment than a memory
    links to, ids whose order is not the order they come in (capitals, digits, an accent),
    memories on both edges of the 24-hour window and just past it, and ones without a
    time or with only the time they were mentioned."""
    ids = [f"{p}{i}" for i in range(9) for p in ("z", "a", "B", "é")][:34]
    items: list[dict[str, Any]] = [
        {"id": memory_id, "text": f"note {memory_id} of the same moment", "occurred_start": moment}
        for memory_id in ids
    ]
    day, tick = timedelta(hours=24), timedelta(microseconds=1)
    for memory_id, when in (
        ("edge-before", moment - day),
        ("edge-after", moment + day),
        ("past-before", moment - day - tick),
        ("past-after", moment + day + tick),
        ("near-after", moment + timedelta(minutes=7)),
    ):
        items.append({"id": memory_id, "text": f"note {memory_id}", "occurred_start": when})
    items.append({"id": "timeless", "text": "note without a time"})
    items.append({"id": "mentioned", "text": "note", "mentioned_at": moment + timedelta(hours=3)})
    return items


def test_an_import_makes_the_temporal_links_retain_makes_at_every_limit(
    engine: MemoryEngine, bank: str, other_bank: str, db: Conn
) -> None:
    items = _crowded(datetime(2024, 2, 29, 12, tzinfo=UTC))
    for start in range(0, len(items), 15):
        engine.retain(other_bank, items[start : start + 15])
    engine.import_memories(bank, items, batch_size=15)
    imported, retained = _bank_rows(db, bank), _bank_rows(db, other_bank)
    temporal = [row for row in retained["memory_links"] if row[2] == "temporal"]
    per_memory = Counter(row[0] for row in temporal)
    assert max(per_memory.values()) == engine.settings.temporal_link_max, "the limit binds"
    crowd = {
        item["id"] for item in items if item.get("occurred_start") == items[0]["occurred_start"]
    }
    pairs = {frozenset(row[:2]) for row in temporal}
    assert {frozenset(("B0", "edge-before")), frozenset(("B0", "edge-after"))} <= pairs
    outside = {"past-before", "past-after"}
    assert not any(pair & crowd and pair & outside for pair in pairs), "the window's edge holds"
    assert not any("timeless" in pair for pair in pairs) and any("mentioned" in p for p in pairs)
    _assert_same_rows(imported, retained)


def test_links_left_by_a_hand_made_delete_give_way_to_the_imported_ones(
    engine: MemoryEngine, bank: str, other_bank: str, db: Conn
) -> None:
    items = _items(20)
    engine.import_memories(other_bank, items, batch_size=10)
    engine.retain(bank, _items(1, start=50))
    # links carry no foreign keys: deleting memories by hand leaves theirs behind
    db.execute(
        "INSERT INTO memory_links (bank_id, from_unit_id, to_unit_id, link_type, weight)"
        " VALUES (%s, 'm0003', 'm0050', 'semantic', 0.5), (%s, 'm0004', 'm0050', 'causes', 1)",
        (bank, bank),
    )
    engine.import_memories(bank, items, batch_size=10)
    engine.delete_memories(bank, ["m0050"])
    _assert_same_rows(_bank_rows(db, bank), _bank_rows(db, other_bank))


sql_links = _holding(0)
holds_25 = _holding(25)


def _imported_beside(
    engine: MemoryEngine,
    sql_links: MemoryEngine,
    banks: tuple[str, str],
    db: Conn,
    items: list[dict[str, Any]],
    written_beside: list[dict[str, Any]],
) -> dict[str, list[tuple[Any, ...]]]:
    """Import ``items`` into the first bank with ``engine`` and into the second with links
    found in SQL, another writer retaining ``written_beside`` into each bank as the third
    batch is read; the first bank's rows, checked to equal the second's."""

    def with_a_write_beside(target: str) -> Iterator[dict[str, Any]]:
        for i, item in enumerate(items):
            if i == 20:
                sql_links.retain(target, written_beside)
            yield item

    engine.import_memories(banks[0], with_a_write_beside(banks[0]), batch_size=10)
    sql_links.import_memories(banks[1], with_a_write_beside(banks[1]), batch_size=10)
    found = _bank_rows(db, banks[0])
    _assert_same_rows(found, _bank_rows(db, banks[1]))
    return found


@pytest.fixture
def in_sql(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, bool]]:
    """Whether each batch searched for its semantic and its temporal links in SQL."""
    searched: list[tuple[bool, bool]] = []
    sql_path = links.link_plan

    def spied(bank_id: str, ids: Any, settings: Settings, semantic: bool, temporal: bool) -> Any:
        searched.append((semantic, temporal))
        return sql_path(bank_id, ids, settings, semantic, temporal)

    monkeypatch.setattr(links, "link_plan", spied)
    return searched


def test_with_nobody_else_writing_every_batch_uses_the_links_found_in_process(
    engine: MemoryEngine, bank: str, in_sql: list[tuple[bool, bool]]
) -> None:
    engine.import_memories(bank, _items(20), batch_size=10)  # a second import loads them
    engine.import_memories(bank, _items(30), batch_size=10)
    assert in_sql == [(False, False)] * 3, "neither kind of link is searched for in SQL"


def test_links_found_in_the_importing_process_give_way_when_the_bank_changes_beside_it(
    engine: MemoryEngine, sql_links: MemoryEngine, bank: str, other_bank: str, db: Conn
) -> None:
    items = _items(50)
    # near-repeats of the later items, written into the bank while the import runs
    extras = [{**item, "id": f"x{item['id']}"} for item in items[30:36]]
    found = _imported_beside(engine, sql_links, (bank, other_bank), db, items, extras)
    assert any(to.startswith("x") for f, to, t, _ in found["memory_links"] if f >= "m0030")


def test_links_found_in_the_importing_process_give_way_when_a_memory_changes_beside_it(
    engine: MemoryEngine, sql_links: MemoryEngine, bank: str, other_bank: str, db: Conn
) -> None:
    """A memory retained again with another text: the bank's size stays, its vector
    doesn't."""
    items = _items(50)
    changed = {**items[3], "text": "The quarterly tax return was filed with the accountant"}
    _imported_beside(engine, sql_links, (bank, other_bank), db, items, [changed])


def test_links_found_in_the_importing_process_give_way_when_memories_are_deleted_beside_it(
    engine: MemoryEngine, sql_links: MemoryEngine, bank: str, db: Conn
) -> None:
    """Links carry no foreign keys: a link the import found among the vectors it holds
    must not reach a memory deleted since."""
    items = _items(50)
    gone = [item["id"] for item in items[:10]]

    def with_a_delete_beside() -> Iterator[dict[str, Any]]:
        for i, item in enumerate(items):
            # Read with the fourth batch, while the second is written: the first is stored
            # (read with the third, the delete would race its write), the vectors held
            # still have it.
            if i == 30:
                assert sql_links.delete_memories(bank, gone) == len(gone)
            yield item

    engine.import_memories(bank, with_a_delete_beside(), batch_size=10)
    dangling = db.execute(
        "SELECT count(*) FROM memory_links l WHERE l.bank_id = %s AND EXISTS ("
        " SELECT FROM unnest(ARRAY[l.from_unit_id, l.to_unit_id]) AS e(id) WHERE NOT EXISTS ("
        "  SELECT FROM memory_units m WHERE m.bank_id = l.bank_id AND m.id = e.id))",
        (bank,),
    ).fetchone()
    assert dangling == (0,)
    assert count(db, "memory_units", bank) == len(items) - len(gone)


def test_past_the_size_held_in_memory_the_import_goes_on_finding_links_in_sql(
    holds_25: MemoryEngine, sql_links: MemoryEngine, bank: str, other_bank: str, db: Conn
) -> None:
    items = _items(45)
    holds_25.import_memories(bank, items[:5], batch_size=10)  # loaded when resumed
    holds_25.import_memories(bank, items, batch_size=10)
    sql_links.import_memories(other_bank, items[:5], batch_size=10)
    sql_links.import_memories(other_bank, items, batch_size=10)
    _assert_same_rows(_bank_rows(db, bank), _bank_rows(db, other_bank))


def test_totals_left_wrong_are_mended_and_the_links_still_found_in_process(
    engine: MemoryEngine, bank: str, other_bank: str, db: Conn, in_sql: list[tuple[bool, bool]]
) -> None:
    items = _items(30)
    engine.import_memories(other_bank, items[:10], batch_size=10)
    engine.import_memories(other_bank, items, batch_size=10)
    engine.import_memories(bank, items[:10], batch_size=10)
    # as a store from before the totals, or a hand-made change, leaves them
    db.execute("UPDATE banks SET doc_count = 0, total_length = 0 WHERE bank_id = %s", (bank,))
    in_sql.clear()
    engine.import_memories(bank, items, batch_size=10)
    assert in_sql == [(False, False)] * 2
    _assert_same_rows(_bank_rows(db, bank), _bank_rows(db, other_bank))


def test_a_memory_dated_in_year_one_is_held_whatever_the_servers_time_zone(
    settings: Settings, engine: MemoryEngine, scratch_db: str
) -> None:
    with psycopg.connect(scratch_db, autocommit=True) as conn:
        name = conn.info.dbname
        conn.execute(f"ALTER DATABASE \"{name}\" SET TimeZone = 'America/New_York'")
    own = settings.with_overrides({"database_url": scratch_db})
    first = datetime(1, 1, 1, 0, 30, tzinfo=UTC)
    with MemoryEngine(settings=own, embedder=engine._core.embedder) as dated:
        dated.retain("b", [{"id": "first", "text": "The first note", "occurred_start": first}])
        later = {"id": "later", "text": "A later note", "occurred_start": first.replace(hour=5)}
        assert dated.import_memories("b", [later]).imported == 1
        with psycopg.connect(scratch_db) as conn:
            temporal = conn.execute(
                "SELECT from_unit_id, to_unit_id FROM memory_links WHERE link_type = 'temporal'"
            ).fetchall()
    assert temporal == [("later", "first")]

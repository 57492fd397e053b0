"""An import with its search indexes set aside: the same rows, the indexes gone
while it loads and back as the migrations define them afterwards, whether it ends, fails or
stops finding links itself; and an engine opening a store that lacks them builds them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from hindsight_tools import InvalidRequestError, MemoryEngine, Settings
from hindsight_tools.runtime.program import Parallel
from hindsight_tools.store.deferred_indexes import (
    DEFERRED_INDEXES,
    build_lanes,
    build_missing_indexes,
)
from tests.conftest import deferred_indexes
from tests.test_import import _assert_same_rows, _bank_rows, _holding, _items

Conn = psycopg.Connection[tuple[Any, ...]]
holds_25 = _holding(25)


def _watched(items: list[dict[str, Any]], db: Conn, seen: list[int]) -> Iterator[dict[str, Any]]:
    """The items, noting how many search indexes the store has as each batch of 10 is read."""
    for i, item in enumerate(items):
        if i % 10 == 0:
            seen.append(len(deferred_indexes(db)))
        yield item


def test_a_deferred_import_stores_the_same_and_puts_the_indexes_back_as_migrated(
    engine: MemoryEngine, bank: str, other_bank: str, db: Conn
) -> None:
    migrated = deferred_indexes(db)
    assert [name for name, _ in migrated] == sorted(DEFERRED_INDEXES)
    items = _items(40)
    seen: list[int] = []
    result = engine.import_memories(
        bank, _watched(items, db, seen), batch_size=10, defer_indexes=True
    )
    assert result.imported == 40 and result.indexes_deferred
    assert seen[1:] == [0, 0, 0], "the indexes are set aside while the batches are written"
    assert deferred_indexes(db) == migrated
    engine.import_memories(other_bank, items, batch_size=10)
    _assert_same_rows(_bank_rows(db, bank), _bank_rows(db, other_bank))
    found = engine.recall(bank, "Who painted the view in Lisbon?")
    assert found.memories, "the rebuilt indexes serve recall"


def test_a_deferred_import_that_fails_still_puts_the_indexes_back(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    migrated = deferred_indexes(db)
    items = _items(25)

    def cut_short() -> Iterator[dict[str, Any]]:
        yield from items[:15]
        raise OSError("the export file went away")

    with pytest.raises(OSError, match="went away"):
        engine.import_memories(bank, cut_short(), batch_size=10, defer_indexes=True)
    assert deferred_indexes(db) == migrated


def test_the_async_twin_sets_them_aside_and_puts_them_back(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    migrated = deferred_indexes(db)
    seen: list[int] = []

    async def run() -> None:
        try:
            watched = _watched(_items(25), db, seen)
            result = await engine.aio.import_memories(
                bank, watched, batch_size=10, defer_indexes=True
            )
            assert result.indexes_deferred
        finally:
            await engine.aio.close()

    asyncio.run(run())
    assert seen[1:] == [0, 0]
    assert deferred_indexes(db) == migrated


def test_they_are_kept_when_the_first_batch_would_outgrow_what_is_held(
    holds_25: MemoryEngine, bank: str, db: Conn
) -> None:
    seen: list[int] = []
    holds_25.import_memories(bank, _items(20), batch_size=10)
    watched = _watched(_items(10, start=20), db, seen)
    result = holds_25.import_memories(bank, watched, batch_size=10, defer_indexes=True)
    assert result.imported == 10 and not result.indexes_deferred
    assert seen == [len(DEFERRED_INDEXES)]


def test_once_the_import_stops_finding_links_itself_the_indexes_come_back_at_once(
    holds_25: MemoryEngine, bank: str, db: Conn
) -> None:
    seen: list[int] = []
    watched = _watched(_items(50), db, seen)
    holds_25.import_memories(bank, watched, batch_size=10, defer_indexes=True)
    # batches 1-2 are held in memory; the third would pass 25, so the links of the rest are
    # found in SQL, through the indexes, built before that batch is written
    assert seen[1:3] == [0, 0]
    assert seen[-1] == len(DEFERRED_INDEXES)


def test_a_value_other_than_a_boolean_is_refused_before_anything_is_dropped(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    with pytest.raises(InvalidRequestError, match="defer_indexes: must be true or false"):
        engine.import_memories(bank, _items(3), defer_indexes="yes")  # type: ignore[arg-type]
    assert len(deferred_indexes(db)) == len(DEFERRED_INDEXES)


def test_an_engine_opening_a_store_without_them_builds_them(
    settings: Settings, engine: MemoryEngine, scratch_db: str
) -> None:
    own = settings.with_overrides({"database_url": scratch_db})
    with MemoryEngine(settings=own, embedder=engine._core.embedder) as first:
        first.retain("b", _items(5))
    with psycopg.connect(scratch_db, autocommit=True) as conn:
        migrated = deferred_indexes(conn)
        dropped = ["memory_units_embedding_world", "memory_units_embedding_hnsw", "memory_links_to"]
        dropped += ["memory_units_search", "memory_terms_unit"]
        conn.execute(f"DROP INDEX {', '.join(dropped)}")
        assert len(deferred_indexes(conn)) == len(DEFERRED_INDEXES) - len(dropped)
        with MemoryEngine(settings=own, embedder=engine._core.embedder) as second:
            assert deferred_indexes(conn) == migrated
            assert second.recall("b", "Who went to Portland?").memories


def test_the_whole_graph_is_built_beside_the_others() -> None:
    assert build_lanes(list(DEFERRED_INDEXES)) == [
        ["memory_units_embedding_hnsw"],
        [name for name in DEFERRED_INDEXES if name != "memory_units_embedding_hnsw"],
    ]
    rest = ["memory_units_embedding_world", "memory_units_embedding_experience", "memory_links_to"]
    assert build_lanes(rest) == [rest[0::2], rest[1::2]]
    assert build_lanes(["memory_links_to"]) == [["memory_links_to"]]
    assert build_lanes([]) == []


def test_a_pool_of_one_connection_gets_one_lane_and_a_larger_pool_two() -> None:
    def lanes(connections: int) -> list[str]:
        program = build_missing_indexes("64MB", connections)
        program.send(None)  # asks which indexes are missing
        step = program.send({"missing": (list(DEFERRED_INDEXES), 0.0)})
        assert isinstance(step, Parallel)
        return list(step.plans)

    assert lanes(1) == ["lane 0"]
    assert lanes(2) == ["lane 0", "lane 1"]

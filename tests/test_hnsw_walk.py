"""The walk of the HNSW graph every bank shares, on the real store."""

from __future__ import annotations

from typing import Any

from hindsight_tools import MemoryEngine
from hindsight_tools.runtime.plan import Statement
from hindsight_tools.store.hnsw import walk_hnsw

_NEAREST = (
    "SELECT id FROM memory_units WHERE bank_id = %(bank)s ORDER BY embedding <=> %(v)s LIMIT %(k)s"
)


def _nearest(engine: MemoryEngine, settings: list[Statement], bank: str, vector: Any) -> int:
    """How many of the bank's 5 nearest memories a graph search returns."""
    with engine._pool.connection() as conn, conn.transaction():
        for setting in settings:
            assert isinstance(setting.query, str)
            conn.execute(setting.query, setting.params)
        # Only the graph gives this order once sorts are priced out, so the bank's btree
        # can't stand in for the walk on a table this small.
        conn.execute("SET LOCAL enable_sort = off")
        return len(conn.execute(_NEAREST, {"bank": bank, "v": vector, "k": 5}).fetchall())


def test_a_small_bank_is_found_in_a_graph_another_bank_fills(
    engine: MemoryEngine, bank: str
) -> None:
    crowd = f"{bank}-crowd"
    try:
        engine.retain(
            crowd,
            [
                {"id": f"b{i}", "text": f"Notes from quarterly budget meeting number {i}"}
                for i in range(120)
            ],
        )
        engine.retain(
            bank, [{"id": f"r{i}", "text": f"Banana bread recipe, step {i}"} for i in range(5)]
        )
        # A question about the other bank's subject: the graph's nearest candidates are all
        # the crowd's, and a search that stops at them finds none of the small bank's.
        vector = engine._core.embedder.embed(["the quarterly budget meeting"])[0]
        assert _nearest(engine, [], bank, vector) < 5
        assert _nearest(engine, list(walk_hnsw(5)), bank, vector) == 5
    finally:
        engine.delete_bank(crowd)

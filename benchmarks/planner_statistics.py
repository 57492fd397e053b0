"""Does a bank written since the last ANALYZE become known to PostgreSQL's planner?

The arms' plans rest on the planner's estimate of a bank's rows, from the statistics of the
last ANALYZE; an import of many memories ends with one, a retain doesn't. This builds a
store in a folder of its own: a bank of ``--big`` memories, imported and analysed, then a
second bank of ``--grown`` memories written by ``--batches`` imports that leave ANALYZE to
autovacuum (``HINDSIGHT_API_IMPORT_ANALYZE_MIN=0``), as retains would. Autovacuum wakes
every ``--naptime`` seconds instead of every minute, so the run need not wait long; it
waits until autovacuum has analysed both tables below since the last batch, or ``--wait``
seconds. Then it
prints the planner's estimate of the second bank's rows in ``memory_units`` and
``memory_terms`` against the real counts, with the tables' analyse threshold as the store
sets it (migration ``0012``: 1% of a table) and as PostgreSQL's default (10%).

    .venv/bin/python -m benchmarks.planner_statistics [--big 20000] [--grown 1500]
        [--batches 6] [--naptime 2] [--wait 30]

Memories are the recall benchmark's synthetic text (``benchmarks/recall_bench_data.py``)
with random unit vectors: the estimates depend on row counts, not on what the rows say.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.recall_bench_data import make_memories, make_vocabulary
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.store.statistics import ANALYZED_TABLES

TABLES = ("memory_units", "memory_terms")
THRESHOLDS = ("store", "default")


def _items(bank: str, count: int, dimension: int, seed: int) -> Iterator[dict[str, Any]]:
    vectors = np.random.default_rng(seed)
    for memory in make_memories(bank, count, make_vocabulary(random.Random(seed)), seed):
        vector = vectors.standard_normal(dimension).astype(np.float32)
        yield {
            **memory.item(),
            "entities": [],
            "embedding": (vector / np.linalg.norm(vector)).tolist(),
        }


def grown_bank(
    data_dir: Path,
    *,
    big: int,
    grown: int,
    batches: int,
    threshold: str,
    naptime: int = 2,
    wait: float = 30.0,
    seed: int = 7,
) -> dict[str, tuple[float, int]]:
    """Each of :data:`TABLES` -> (the planner's estimate of the grown bank's rows, their
    real count), once autovacuum has analysed both tables or ``wait`` seconds have passed.
    ``threshold`` is ``store`` (the tables as migrated) or ``default`` (reset to
    PostgreSQL's own)."""
    if threshold not in THRESHOLDS:
        raise ValueError(f"threshold must be one of {', '.join(THRESHOLDS)}, got {threshold!r}")
    settings = Settings(
        data_dir=data_dir,
        import_analyze_min=0,
        embedded_server_settings={"autovacuum_naptime": f"{naptime}s"},
    )
    with MemoryEngine(settings=settings) as engine:
        with engine._pool.connection() as conn:
            stored = conn.execute(
                "SELECT value FROM hindsight_meta WHERE key = 'embedding_dimension'"
            ).fetchone()
            assert stored is not None
            dimension = int(stored[0])
            if threshold == "default":
                for table in ANALYZED_TABLES:
                    # fixed names, never input
                    conn.execute(f"ALTER TABLE {table} RESET (autovacuum_analyze_scale_factor)")
        engine.import_memories("big", _items("big", big, dimension, seed))
        with engine._pool.connection() as conn:
            conn.execute(f"ANALYZE {', '.join(TABLES)}")
        each = -(-grown // batches)
        items = list(_items("grown", grown, dimension, seed + 1))
        for first in range(0, grown, each):
            engine.import_memories("grown", items[first : first + each])
        # an ANALYZE between two of the batches would have seen only part of the bank
        written = time.time()
        with engine._pool.connection() as conn:
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                analysed = conn.execute(
                    "SELECT count(*) FROM pg_stat_user_tables WHERE relname = ANY(%s) "
                    "AND last_autoanalyze > to_timestamp(%s)",
                    (list(TABLES), written),
                ).fetchone()
                if analysed is not None and analysed[0] == len(TABLES):
                    break
                time.sleep(0.5)
            found: dict[str, tuple[float, int]] = {}
            for table in TABLES:
                query = f"SELECT * FROM {table} WHERE bank_id = 'grown'"
                plan = conn.execute(f"EXPLAIN (FORMAT JSON) {query}").fetchone()
                real = conn.execute(f"SELECT count(*) FROM ({query}) AS rows").fetchone()
                assert plan is not None and real is not None
                found[table] = (float(plan[0][0]["Plan"]["Plan Rows"]), int(real[0]))
    return found


def main(argv: Sequence[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--big", type=int, default=20_000)
    parser.add_argument("--grown", type=int, default=1_500)
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--naptime", type=int, default=2, help="autovacuum's wake-up, seconds")
    parser.add_argument("--wait", type=float, default=30.0, help="at most, seconds")
    args = parser.parse_args(argv)
    lines = [
        f"A bank of {args.big:,} memories, analysed; then a bank of {args.grown:,} written in "
        f"{args.batches} imports without ANALYZE; autovacuum every {args.naptime} s, waited "
        f"for up to {args.wait:.0f} s. The planner's estimate of the second bank's rows:",
        "",
        "| analyse threshold | " + " | ".join(f"{t} estimate (real)" for t in TABLES) + " |",
        "|---|" + "---:|" * len(TABLES),
    ]
    for threshold in THRESHOLDS:
        with tempfile.TemporaryDirectory(prefix="hindsight-planner-") as folder:
            found = grown_bank(
                Path(folder),
                big=args.big,
                grown=args.grown,
                batches=args.batches,
                threshold=threshold,
                naptime=args.naptime,
                wait=args.wait,
            )
        name = "the store's (1%)" if threshold == "store" else "PostgreSQL's default (10%)"
        cells = " | ".join(f"{found[t][0]:,.0f} ({found[t][1]:,})" for t in TABLES)
        lines.append(f"| {name} | {cells} |")
    report = "\n".join(lines)
    print(report)
    return report


if __name__ == "__main__":
    main()

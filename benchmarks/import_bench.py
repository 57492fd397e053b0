"""Bulk import throughput: memories/s with vectors given, and with the encoders in the path.

    .venv/bin/python -m benchmarks.import_bench [--memories 20000] [--encoded 4000]
        [--background 0] [--batch 1000] [--out docs/benchmarks/import.md]

The memories are the recall benchmark's synthetic lives (`benchmarks/recall_bench_data.py`:
template text over invented people, places and activities, dates over three years, tags),
so entities, keyword postings and temporal and semantic links are made as for real text.
Their vectors are that benchmark's composite vectors: the real model's vectors of each
text's components, summed, plus noise, so near-repeats are as close as real ones.

1. **Vectors given**: `--memories` items, each with its `embedding`, imported into a fresh
   bank of a store that already holds `--background` memories (a bank of their own, loaded
   the same way first). Links are built as in normal use.
2. **Encoders in the path**: `--encoded` items without vectors imported into another fresh
   bank, next to the encoders' own throughput on the same texts in the same batches
   (the embedding model, then the late-interaction model, one after the other, as import
   runs them): the import's rate as a share of what the encoders alone allow.

3. **Indexes set aside**: the items of 1, and those of 2, with `defer_indexes`, each into
   a store of its own holding the same background: the indexes that only searches and
   forgetting read (`hindsight_tools/store/deferred_indexes.py`) dropped for the load and
   built once after it, the build counted in the
   time. With `--database-url` there is one database: these run last, in it, and each
   build covers the other runs' rows too.
4. **Where a memory's write time goes**: the given bank's last 1,000 memories and their
   links inserted again into copies of the tables that hold the rest, the indexes and
   foreign keys of the real tables added one kind at a time (HNSW upkeep, link rows and
   their indexes); what is left of the import's time per memory is the keyword postings,
   entities and the rest.

Each run uses throw-away data directories.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg

from benchmarks.machine import machine_facts
from benchmarks.recall_bench_data import make_memories, make_vocabulary
from benchmarks.recall_bench_vectors import CompositeEmbedder
from benchmarks.reports import publish, report_head
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.cli.commands import non_negative_int, positive_int
from hindsight_tools.encoders.embedding import Embedder, default_embedder, embed_texts

SEED = 7
# Each step's insert is timed this many times and the median kept: one timing of an HNSW
# insert moved by more than the next step's whole cost.
REPEATS = 3


def _items(
    bank: str, count: int, embedder: CompositeEmbedder, with_vectors: bool
) -> list[dict[str, Any]]:
    memories = make_memories(bank, count, make_vocabulary(random.Random(SEED)), SEED)
    for memory in memories:
        embedder.register(memory.text, memory.parts)
    vectors = embedder.vectors([m.text for m in memories]) if with_vectors else None
    items = []
    for i, memory in enumerate(memories):
        item = memory.item()
        if vectors is not None:
            item["embedding"] = vectors[i].tolist()
        items.append(item)
    return items


def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _timed_import(
    engine: MemoryEngine,
    bank: str,
    items: list[dict[str, Any]],
    batch: int,
    defer_indexes: bool = False,
) -> float:
    started = time.perf_counter()
    result = engine.import_memories(bank, items, batch_size=batch, defer_indexes=defer_indexes)
    elapsed = time.perf_counter() - started
    assert result.imported == len(items), result
    return elapsed


def _aside(
    folder: Path,
    embedder: Embedder,
    background: list[dict[str, Any]],
    items: list[dict[str, Any]],
    batch: int,
) -> float:
    """Seconds of an import with the vector indexes set aside, into a store of its own
    holding ``background``."""
    with MemoryEngine(settings=Settings(data_dir=folder), embedder=embedder) as engine:
        if background:
            _timed_import(engine, "background", background, batch)
        return _timed_import(engine, "import-aside", items, batch, defer_indexes=True)


def _link_counts(engine: MemoryEngine, bank: str) -> dict[str, int]:
    with engine._pool.connection() as conn:
        rows = conn.execute(
            "SELECT link_type, count(*) FROM memory_links WHERE bank_id = %s GROUP BY 1",
            (bank,),
        ).fetchall()
    return {str(kind): int(n) for kind, n in rows}


# The real table's keys and indexes, as the catalogue defines them.
_KEYS = """
SELECT contype, pg_get_constraintdef(oid) FROM pg_constraint
WHERE conrelid = %s::regclass AND contype IN ('p', 'f') ORDER BY conname
"""
_INDEXES = """
SELECT am.amname, i.indpred IS NOT NULL, pg_get_indexdef(i.indexrelid)
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam
WHERE i.indrelid = %s::regclass AND NOT i.indisprimary
ORDER BY c.relname
"""
_INDEX_HEAD = re.compile(r"^CREATE (UNIQUE )?INDEX \S+ ON \S+ ")


def write_steps(conn: psycopg.Connection[Any], source: str) -> list[tuple[str, tuple[str, ...]]]:
    """The keys and indexes of ``source`` in the order they are added to a copy of it, one
    kind a step, each statement with ``{table}`` standing for the copy: the primary key with the
    btree, GIN and GiST indexes, then (memory_units) the HNSW index over every memory and
    the per-fact-type ones, then the foreign keys."""
    keys = conn.execute(_KEYS, (source,)).fetchall()
    indexes = conn.execute(_INDEXES, (source,)).fetchall()

    def on_copy(definition: str) -> str:
        return _INDEX_HEAD.sub(
            lambda m: f"CREATE {m.group(1) or ''}INDEX ON {{table}} ", definition
        )

    plain = [on_copy(d) for method, _, d in indexes if method != "hnsw"]
    steps = [
        ("its key and btree, GIN and GiST indexes",
         (*(f"ALTER TABLE {{table}} ADD {d}" for kind, d in keys if kind == "p"), *plain)),
        ("the HNSW index of every memory",
         tuple(on_copy(d) for method, partial, d in indexes if method == "hnsw" and not partial)),
        ("the HNSW index of its fact type",
         tuple(on_copy(d) for method, partial, d in indexes if method == "hnsw" and partial)),
        ("its foreign keys",
         tuple(f"ALTER TABLE {{table}} ADD {d}" for kind, d in keys if kind == "f")),
    ]  # fmt: skip
    return [(label, statements) for label, statements in steps if statements]


def write_costs(engine: MemoryEngine, bank: str, last: int = 1000) -> list[tuple[str, float]]:
    """Milliseconds per memory that each kind of index or check adds to writing its row
    and its links: (what, ms), measured on copies; the store itself is left as it was."""
    with psycopg.connect(engine.database_url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM memory_units WHERE bank_id = %s ORDER BY id", (bank,)
        ).fetchall()]  # fmt: skip
        cut = ids[-last]
        costs: list[tuple[str, float]] = []
        for table, source, key, what in (
            ("import_bench_units", "memory_units", "id", "a memory's row"),
            ("import_bench_links", "memory_links", "from_unit_id", "its links"),
        ):
            steps = write_steps(conn, source)
            # {table}, {source} and {key} are the fixed names above, never input.
            # plain tables: a temporary one can't have a foreign key to memory_units
            conn.execute(f"CREATE TABLE {table} AS SELECT * FROM {source} "
                         f"WHERE bank_id = %s AND {key} < %s", (bank, cut))  # fmt: skip
            conn.execute(f"CREATE TABLE {table}_new AS SELECT * FROM {source} "
                         f"WHERE bank_id = %s AND {key} >= %s", (bank, cut))  # fmt: skip
            before = 0.0
            for label, statements in ((f"{what}, no index", ()), *steps):
                for statement in statements:
                    conn.execute(statement.replace("{table}", table))
                runs = []
                for _ in range(REPEATS):
                    started = time.perf_counter()
                    conn.execute(f"INSERT INTO {table} SELECT * FROM {table}_new")
                    runs.append((time.perf_counter() - started) * 1000 / last)
                    conn.execute(f"DELETE FROM {table} WHERE {key} >= %s", (cut,))
                ms = statistics.median(runs)
                costs.append((label if not statements else f"{what}: + {label}", ms - before))
                before = ms
            conn.execute(f"DROP TABLE {table}, {table}_new")
    return costs


def main(argv: Sequence[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=positive_int, default=20_000)
    parser.add_argument("--encoded", type=positive_int, default=4_000)
    parser.add_argument("--background", type=non_negative_int, default=0)
    parser.add_argument("--batch", type=positive_int, default=1000)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--database-url", help="an empty database to use instead of a throw-away embedded one"
    )
    args = parser.parse_args(argv)

    data_dir = Path(tempfile.mkdtemp(prefix="hti-", dir="/tmp"))
    settings = Settings(data_dir=data_dir, database_url=args.database_url)
    aside_dirs = [Path(tempfile.mkdtemp(prefix="hti-", dir="/tmp")) for _ in range(2)]
    real = default_embedder(settings.embeddings_model, settings.embeddings_batch_size)
    composite = CompositeEmbedder(real, SEED)
    try:
        given = _items("import-given", args.memories, composite, with_vectors=True)
        background = _items("background", args.background, composite, with_vectors=True)
        encoded = _items("import-encoded", args.encoded, composite, with_vectors=False)
        with MemoryEngine(settings=settings, embedder=real) as engine:
            facts = machine_facts(engine.database_url)
            if background:
                _timed_import(engine, "background", background, args.batch)
            given_seconds = _timed_import(engine, "import-given", given, args.batch)
            given_links = _link_counts(engine, "import-given")
            costs = write_costs(engine, "import-given", min(1000, args.memories // 4))

            texts = [item["text"] for item in encoded]
            late = engine._core.late_interaction
            embed_texts(real, texts[:8])  # model warm-up is neither side's time
            started = time.perf_counter()
            for batch in _batches(texts, args.batch):
                embed_texts(real, batch)
                if late is not None:
                    late.encode_documents(batch)
            encoder_seconds = time.perf_counter() - started
            encoded_seconds = _timed_import(engine, "import-encoded", encoded, args.batch)
            if args.database_url is not None:  # its one database holds the others' rows too
                others = args.background + args.memories + args.encoded
                others_encoded = others + args.memories
                deferred_seconds = _timed_import(
                    engine, "import-deferred", given, args.batch, defer_indexes=True
                )
                deferred_encoded_seconds = _timed_import(
                    engine, "encoded-deferred", encoded, args.batch, defer_indexes=True
                )
        if args.database_url is None:  # each in a store of its own, with the same background
            others = others_encoded = args.background
            deferred_seconds = _aside(aside_dirs[0], real, background, given, args.batch)
            deferred_encoded_seconds = _aside(aside_dirs[1], real, background, encoded, args.batch)
    finally:
        for folder in (data_dir, *aside_dirs):
            shutil.rmtree(folder, ignore_errors=True)

    command = "`.venv/bin/python -m benchmarks.import_bench " + " ".join(
        f"--{k} {v}" for k, v in (
            ("memories", args.memories), ("encoded", args.encoded),
            ("background", args.background), ("batch", args.batch),
        )
    ) + "`"  # fmt: skip
    lines = [
        *report_head("Bulk import throughput", "benchmarks/import_bench.py", command, facts),
        "| path | memories | seconds | memories/s |",
        "|---|---:|---:|---:|",
        f"| vectors given, into a store of {args.background:,} others | {args.memories:,} | "
        f"{given_seconds:.1f} | {args.memories / given_seconds:,.0f} |",
        f"| vectors given, search indexes set aside and built after the load, into a "
        f"store "
        f"of {others:,} others | {args.memories:,} | {deferred_seconds:.1f} | "
        f"{args.memories / deferred_seconds:,.0f} |",
        f"| encoders in the path | {args.encoded:,} | {encoded_seconds:.1f} | "
        f"{args.encoded / encoded_seconds:,.0f} |",
        f"| encoders in the path, search indexes set aside and built after the load, "
        f"into a "
        f"store of {others_encoded:,} others | {args.encoded:,} | "
        f"{deferred_encoded_seconds:.1f} | "
        f"{args.encoded / deferred_encoded_seconds:,.0f} |",
        f"| the encoders alone, same texts and batches | {args.encoded:,} | "
        f"{encoder_seconds:.1f} | {args.encoded / encoder_seconds:,.0f} |",
        "",
        f"Encoders in the path run at **{encoder_seconds / encoded_seconds:.0%}** of the "
        "encoders' own throughput; with the search indexes set aside, at "
        f"**{encoder_seconds / deferred_encoded_seconds:.0%}**.",
        "",
        "Links made by the import with vectors given: "
        + ", ".join(f"{n:,} {kind}" for kind, n in sorted(given_links.items())),
        "",
        "## Where a memory's write time goes (vectors given)",
        "",
        f"The import with vectors given took {given_seconds * 1000 / args.memories:.2f} ms a "
        "memory. The last memories of its bank and their links, inserted again into copies "
        "of the tables holding the rest, each kind of index or check added in turn (each "
        f"the median of {REPEATS} timings):",
        "",
        "| what | ms a memory |",
        "|---|---:|",
        *(f"| {label} | {ms:.2f} |" for label, ms in costs),
        f"| all of the above | {sum(ms for _, ms in costs):.2f} |",
        "",
        "The rest of the import's time goes to the keyword postings, entities, the staging "
        "copy and the round trips; the semantic and temporal links' neighbours are found in "
        "the importing process, beside the database's write of the batch before "
        "(`hindsight_tools/retain/neighbours.py`, `hindsight_tools/retain/timeline.py`), "
        "and written by COPY.",
        "",
    ]
    return publish("\n".join(lines), args.out)


if __name__ == "__main__":
    main()

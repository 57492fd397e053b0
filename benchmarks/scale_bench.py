"""Recall at scale in the two shapes a store grows into: one bank with a long life, and many
small banks in one database.

    .venv/bin/python -m benchmarks.scale_bench [--big 1000000] [--banks 10000]
        [--bank-size 100] [--queries 100] [--warm-up 100] [--shapes many-small alone one-big]
        [--server-setting NAME=VALUE …] [--data-dir DIR] [--reuse] [--out FILE] [--seed 7]

Three stores, each in its own folder under ``--data-dir`` (a temporary folder, removed at
the end, without it):

* ``one-big``: a bank of ``--big`` memories among three banks of 2,000;
* ``many-small``: ``--banks`` banks of ``--bank-size`` memories;
* ``alone``: the first of those small banks, on its own, for the cost of sharing a table.

Memories, questions and vectors are the recall benchmark's (`benchmarks/recall_bench.py`:
template text over invented people, places and activities; composite vectors built from the
real model's vectors of their parts). The stores are built in passes by
:mod:`benchmarks.scale_store`, which says how and what differs from a store filled by
retain. For each store the report gives recall at budgets low/mid/high with the
cross-encoder and with passthrough (p50/p95 and per stage), the bare kNN floor, EXPLAIN
ANALYZE of every statement of each arm with the indexes it read, retain of 100 memories
into a fresh bank and ``delete_bank`` of it, the disk size, the count of tables and indexes
(the same in every store: nothing in the schema is per bank), and whether the store's
indexes and constraints are those of a database migrated afresh.

Each reranker's timed round comes after ``--warm-up`` other questions about the same bank,
asked untimed and without a statement time limit: in a bank of 1,000,000 the hot pages
(HNSW graphs, postings, rows) are gigabytes, which ten questions don't bring into memory,
and a server that has been answering for a while has them there. ``--server-setting`` sets
the embedded server's PostgreSQL settings (``HINDSIGHT_API_EMBEDDED_SERVER_SETTINGS``),
which the report's header shows.
"""

from __future__ import annotations

import argparse
import random
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
from psycopg import sql

from benchmarks.recall_bench import machine_facts
from benchmarks.recall_bench_data import (
    NOW,
    Memory,
    Question,
    make_memories,
    make_questions,
    make_vocabulary,
)
from benchmarks.recall_bench_timing import (
    BankLatency,
    arm_plan,
    explained,
    measure_bank,
    time_recall,
)
from benchmarks.recall_bench_vectors import CompositeEmbedder
from benchmarks.scale_bench_report import ArmPlan, ShapeRun, Writes, render
from benchmarks.scale_store import BuildTimes, built_store
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.cli.commands import non_negative_int, positive_int
from hindsight_tools.encoders.embedding import Embedder, default_embedder
from hindsight_tools.query.time_window import extract_time_window
from hindsight_tools.recall.arms.base import ARM_ORDER

SHAPES = ("many-small", "alone", "one-big")
OTHER_BANKS = 3
OTHER_SIZE = 2000
FRESH_BANKS = 3
FRESH_SIZE = 100
TABLES = (
    "memory_units",
    "memory_links",
    "memory_terms",
    "memory_token_vectors",
    "unit_entities",
    "entities",
    "bank_terms",
    "chunks",
    "documents",
    "banks",
)


@dataclass(frozen=True)
class Shape:
    name: str
    bank: str  # the one whose recall is measured
    # Made when the store is measured, so that only one store's memories are held at a time.
    make_banks: Callable[[], dict[str, list[Memory]]]


def _banks(sizes: dict[str, int], seed: int) -> dict[str, list[Memory]]:
    vocab = make_vocabulary(random.Random(seed))
    return {bank: make_memories(bank, n, vocab, seed) for bank, n in sizes.items()}


def make_shapes(args: argparse.Namespace) -> list[Shape]:
    small = {f"small-{i:05d}": args.bank_size for i in range(args.banks)}
    first = dict(list(small.items())[:1])
    big = {**{f"other-{i}": OTHER_SIZE for i in range(1, OTHER_BANKS + 1)}, "big": args.big}
    shapes = {
        "many-small": Shape("many-small", next(iter(small)), partial(_banks, small, args.seed)),
        "alone": Shape("alone", next(iter(small)), partial(_banks, first, args.seed)),
        "one-big": Shape("one-big", "big", partial(_banks, big, args.seed)),
    }
    return [shapes[name] for name in SHAPES if name in args.shapes]


def explain_arms(
    engine: MemoryEngine, embedder: CompositeEmbedder, bank: str, questions: Sequence[Question]
) -> list[ArmPlan]:
    """EXPLAIN ANALYZE of each arm's query at budget mid, for the first question it runs for
    (the temporal arm runs only for a question that names a time)."""
    plans = []
    timed = [q for q in questions if extract_time_window(q.text, NOW) is not None]
    for arm in ARM_ORDER:
        if arm == "temporal" and not timed:
            plans.append(ArmPlan(arm, "(no question names a time: the arm did not run)", []))
            continue
        question = timed[0] if arm == "temporal" else questions[0]
        vector = embedder.vectors([question.text])[0]
        plan = arm_plan(engine, bank, question.text, vector, None, "mid", arm)
        plans.append(ArmPlan(arm, question.text, explained(engine, plan, "ANALYZE, BUFFERS")))
    return plans


def time_writes(
    engine: MemoryEngine, embedder: CompositeEmbedder, seed: int, count: int = FRESH_BANKS
) -> Writes:
    """Retain ``FRESH_SIZE`` memories into a fresh bank, then delete the bank, ``count`` times."""
    vocab = make_vocabulary(random.Random(seed))
    writes = Writes(size=FRESH_SIZE)
    for n in range(1, count + 1):
        bank = f"fresh-{n}"
        memories = make_memories(bank, FRESH_SIZE, vocab, seed)
        for m in memories:
            embedder.register(m.text, m.parts)
        started = time.perf_counter()
        engine.retain(bank, [m.item() for m in memories])
        writes.retain.append(time.perf_counter() - started)
        started = time.perf_counter()
        engine.delete_bank(bank)
        writes.delete.append(time.perf_counter() - started)
    return writes


def disk_sizes(engine: MemoryEngine) -> dict[str, int]:
    """Bytes of the whole database and of each table with its indexes and TOAST."""
    with engine._pool.connection() as conn:
        sizes = {
            table: int(conn.execute("SELECT pg_total_relation_size(%s::regclass)", (table,))
                       .fetchone()[0])  # type: ignore[index]
            for table in TABLES
        }  # fmt: skip
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return {"database": int(row[0]) if row else 0, **sizes}


_COUNTS = """
SELECT (SELECT count(*) FROM memory_links WHERE link_type = 'semantic'),
       (SELECT count(*) FROM memory_links WHERE link_type = 'temporal'),
       (SELECT count(*) FROM memory_token_vectors),
       (SELECT count(context_vectors) FROM memory_token_vectors)
"""


def row_counts(engine: MemoryEngine) -> dict[str, int]:
    """Rows the build made beyond the memories: links by kind, late-interaction vectors
    and readings in context."""
    with engine._pool.connection() as conn:
        row = conn.execute(_COUNTS).fetchone()
    names = ("semantic links", "temporal links", "token vectors", "readings in context")
    return dict(zip(names, (int(v) for v in row or (0, 0, 0, 0)), strict=True))


_CATALOGUE = """
SELECT count(*) FILTER (WHERE relkind = 'r'), count(*) FILTER (WHERE relkind = 'i')
FROM pg_class WHERE relnamespace = current_schema()::regnamespace
"""


def catalogue(engine: MemoryEngine) -> tuple[int, int]:
    """Tables and indexes in the store's schema."""
    with engine._pool.connection() as conn:
        row = conn.execute(_CATALOGUE).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


# The store's indexes and constraints, as the catalogue defines them.
SCHEMA = """
SELECT 'index', indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()
UNION ALL
SELECT 'constraint', conname, pg_get_constraintdef(oid) FROM pg_constraint
WHERE connamespace = current_schema()::regnamespace
ORDER BY 1, 2
"""
_REFERENCE = "hindsight_schema_reference"


def schema_differences(engine: MemoryEngine, embedder: CompositeEmbedder) -> list[str]:
    """Indexes and constraints that differ between this store and a database migrated
    afresh on the same server (empty when the build left the schema as it found it)."""
    reference = sql.Identifier(_REFERENCE)
    with psycopg.connect(engine.database_url, autocommit=True) as conn:
        mine = {tuple(map(str, row)) for row in conn.execute(SCHEMA).fetchall()}
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(reference))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(reference))
    params = psycopg.conninfo.conninfo_to_dict(engine.database_url)
    params["dbname"] = _REFERENCE
    url = psycopg.conninfo.make_conninfo(**params)  # type: ignore[arg-type]
    light = engine.settings.with_overrides(
        {"reranker_provider": "passthrough", "late_interaction": False}
    )
    try:
        with MemoryEngine(url, settings=light, embedder=embedder):  # migrates it
            pass
        with psycopg.connect(url) as conn:
            fresh = {tuple(map(str, row)) for row in conn.execute(SCHEMA).fetchall()}
    finally:
        with psycopg.connect(engine.database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(reference))
    return [f"only in this store: {' '.join(r)}" for r in sorted(mine - fresh)] + [
        f"only when migrated afresh: {' '.join(r)}" for r in sorted(fresh - mine)
    ]


def warm_up(
    settings: Settings, embedder: Embedder, bank: str, questions: Sequence[Question]
) -> None:
    """Ask ``questions`` as the timed rounds ask theirs, at mid, the times thrown away, with
    no statement time limit: on a server whose caches hold none of a bank of 1,000,000 (a
    restart after other work on the host), the first question's semantic search read its
    HNSW pages from disk for longer than the 30 s a recall statement is allowed."""
    unlimited = settings.with_overrides({"recall_statement_timeout": 0})
    with MemoryEngine(settings=unlimited, embedder=embedder) as engine:
        for q in questions:
            time_recall(engine, bank, q.text, "mid")


def server_setting(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` for the embedded server (``HINDSIGHT_API_EMBEDDED_SERVER_SETTINGS``)."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def run_shape(
    shape: Shape,
    root: Path,
    real: Embedder,
    embedder: CompositeEmbedder,
    args: argparse.Namespace,
) -> ShapeRun:
    settings = Settings(data_dir=root / shape.name, embedded_server_settings=args.server_settings)
    banks = shape.make_banks()
    build: BuildTimes = built_store(
        root / shape.name, settings, embedder, banks, args.seed, args.reuse
    )
    vocab = make_vocabulary(random.Random(args.seed))
    questions = make_questions(banks[shape.bank], args.queries, vocab, args.seed)
    # Other questions about the same bank, asked before each timed round: the timed
    # questions then meet the caches of a server that has been answering, not the pages
    # the build or the other reranker's round left behind.
    warm = make_questions(banks[shape.bank], args.warm_up, vocab, args.seed + 1)
    for q in [*questions, *warm]:
        embedder.register(q.text, q.parts, question=True)
    embedder.embed_components()
    passthrough = settings.with_overrides({"reranker_provider": "passthrough"})
    size = len(banks[shape.bank])
    latency: dict[str, BankLatency] = {}
    with MemoryEngine(settings=settings, embedder=embedder) as engine:
        facts = machine_facts(engine)
        # Passthrough first: the pass after it finds the caches warmer, and the target
        # (mid p95) is passthrough's.
        warm_up(passthrough, embedder, shape.bank, warm)
        with MemoryEngine(settings=passthrough, embedder=embedder) as plain:
            latency[plain.reranker_name] = measure_bank(
                plain, real, embedder, shape.bank, size, questions
            )
        warm_up(settings, embedder, shape.bank, warm)
        latency[engine.reranker_name] = measure_bank(
            engine, real, embedder, shape.bank, size, questions
        )
        plans = explain_arms(engine, embedder, shape.bank, questions)
        writes = time_writes(engine, embedder, args.seed)
        disk = disk_sizes(engine)
        counts = row_counts(engine)
        tables, indexes = catalogue(engine)
        differences = schema_differences(engine, embedder)
    return ShapeRun(
        name=shape.name,
        banks=len(banks),
        memories=sum(len(m) for m in banks.values()),
        bank=shape.bank,
        bank_size=size,
        build=build,
        latency=latency,
        plans=plans,
        writes=writes,
        disk=disk,
        counts=counts,
        tables=tables,
        indexes=indexes,
        schema_differences=differences,
        facts=facts,
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--big", type=positive_int, default=1_000_000, help="memories of the big bank"
    )
    parser.add_argument(
        "--banks", type=positive_int, default=10_000, help="banks of the many-small store"
    )
    parser.add_argument(
        "--bank-size", type=positive_int, default=100, help="memories of a small bank"
    )
    parser.add_argument("--queries", type=positive_int, default=100, help="questions per store")
    parser.add_argument(
        "--warm-up",
        type=non_negative_int,
        default=100,
        help="other questions asked, untimed, before each reranker's timed round",
    )
    parser.add_argument(
        "--server-setting",
        type=server_setting,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a PostgreSQL setting of the embedded server, e.g. shared_buffers=6GB",
    )
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    parser.add_argument("--data-dir", type=Path, help="keep the stores in this folder")
    parser.add_argument("--reuse", action="store_true", help="keep stores built by an earlier run")
    parser.add_argument("--out", type=Path, help="also write the report here")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    args.server_settings = dict(args.server_setting)
    return args


def main(argv: Sequence[str] | None = None) -> str:
    args = parse_args(argv)
    command = shlex.join(["python", "-m", "benchmarks.scale_bench", *(argv or sys.argv[1:])])
    root = args.data_dir or Path(tempfile.mkdtemp(prefix="hts-", dir="/tmp"))
    try:
        base = Settings(data_dir=root)
        real = default_embedder(base.embeddings_model, base.embeddings_batch_size)
        real.embed(["warm-up"])  # model load is not part of any measurement
        embedder = CompositeEmbedder(real, args.seed)
        runs: list[ShapeRun] = []
        report = ""
        for shape in make_shapes(args):
            runs.append(run_shape(shape, root, real, embedder, args))
            report = render(command, runs, args.warm_up)
            if args.out is not None:  # a long run's finished stores are reported already
                args.out.write_text(report + "\n")
    finally:
        if args.data_dir is None:
            shutil.rmtree(root, ignore_errors=True)
    print(report)
    return report


if __name__ == "__main__":
    main()

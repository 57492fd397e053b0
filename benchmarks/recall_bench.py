"""Recall latency on synthetic banks of 10k-100k memories, against the bare pgvector floor.

    .venv/bin/python benchmarks/recall_bench.py [--sizes 10000 100000] [--queries 200]
        [--quick] [--data-dir DIR] [--reuse] [--keep] [--reranker NAME] [--out FILE] [--seed 7]

(or ``python -m benchmarks.recall_bench``, the same arguments). This module is the command;
the banks and questions are built by :mod:`benchmarks.recall_bench_data`, their vectors by
:mod:`benchmarks.recall_bench_vectors`, measured by :mod:`benchmarks.recall_bench_timing`
and reported by :mod:`benchmarks.recall_bench_report`.

Data. Memories come from templates over invented people (first x last names), cities,
venues, activities and objects, with dates over three years, mixed fact types and a few
tags ("Priya Nair met Tomasz Kowalski at the riverside bakery in Lisbon to plan the
hackathon."). Everything is drawn from seeded ``random.Random``: the same seed gives the
same banks and questions. The big bank shares the table with three smaller banks, so the
bank filter of every arm has something to filter.

Embeddings. The real model embeds about 100 texts/s on a 2-core CPU: 100k memories would
take close to 20 minutes before the first recall. :class:`CompositeEmbedder` embeds each template
*component* once with the real model (a few hundred texts) and represents a memory as the
L2-normalised sum of its components' vectors plus a little Gaussian noise seeded by the
text (near-duplicates are close but not identical). The vectors are therefore clustered
the way real ones are: memories sharing a person, place or activity are near each other,
which is what HNSW search, the similarity threshold and semantic links react to. Random
vectors would be uniformly far apart and make every search look alike. Questions are made
from the same components and go through the same embedder; to keep recall's embed stage
honest, embedding a question also runs the real model on it once (the result is dropped).

Measured, on one table with every bank in it (queries interleaved so background load
hits every variant alike):

* recall at budgets low/mid/high: wall p50/p95 and the p50 of each traced stage and arm;
* the floor: one pooled ``ORDER BY embedding <=> q LIMIT 20`` kNN query filtered by bank,
  with and without embedding the question with the real model;
* for a bank of at least 50,000 memories, ``EXPLAIN (ANALYZE, BUFFERS)`` of the semantic
  arm's SQL, built by the recall pipeline itself so it can't drift;
* filtered recall: the semantic arm filtered by bank and fact type, on a small bank and on
  the largest one, vs exact search (index scans off), as mean overlap@k; both as planned
  (small banks usually get an exact scan) and with the HNSW index forced.

The report is Markdown on stdout (and ``--out``); progress bars go to stderr. Without
``--data-dir`` the store lives in a fresh temporary folder, removed at the end unless
``--keep``; a folder given with ``--data-dir`` is never removed (its banks are refilled).
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

if not __package__:
    # Run as a file (benchmarks/recall_bench.py), Python puts this folder on sys.path rather
    # than the repository the imports below come from.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from benchmarks.recall_bench_data import Scale, Workload, make_workload
from benchmarks.recall_bench_report import Run, render
from benchmarks.recall_bench_timing import (
    EXPLAIN_MIN_SIZE,
    explain_semantic,
    filtered_recall,
    measure_bank,
    retain_bank,
)
from benchmarks.recall_bench_vectors import CompositeEmbedder
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.encoders.embedding import Embedder, default_embedder

# --- the machine ---------------------------------------------------------------------------


def machine_facts(engine: MemoryEngine) -> dict[str, str]:
    with engine._pool.connection() as conn:
        pg = conn.execute("SHOW server_version").fetchone()
        vector = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        buffers = conn.execute("SHOW shared_buffers").fetchone()
    cpu = next(
        (line.split(":", 1)[1].strip() for line in _cpuinfo() if line.startswith("model name")),
        platform.processor() or "unknown",
    )
    return {
        "CPU": f"{cpu}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start",
        "PostgreSQL": f"{pg[0] if pg else '?'} (shared_buffers {buffers[0] if buffers else '?'})",
        "pgvector": str(vector[0]) if vector else "?",
        "Python": platform.python_version(),
        # fewer free cores than torch threads makes the real model's latency jump
        "torch threads": str(torch.get_num_threads()),
    }


def _cpuinfo() -> list[str]:
    try:
        return Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return []


# --- main ----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="2,000 memories, 40 questions")
    parser.add_argument("--data-dir", type=Path, help="use (and keep) this data directory")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    parser.add_argument("--out", type=Path, help="also write the report here")
    parser.add_argument(
        "--reranker", help="reranker provider (default: the engine's, auto → onnx here)"
    )
    parser.add_argument(
        "--reuse", action="store_true", help="keep banks of the right size from --data-dir"
    )
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args(argv)


def scale_of(args: argparse.Namespace) -> Scale:
    if args.quick:
        return Scale(sizes=(2000,), questions=40, other_size=500)
    sizes = tuple(dict.fromkeys(args.sizes))  # one bank per distinct size
    return Scale(sizes=sizes, questions=args.queries, other_size=2000)


def run_benchmark(
    engine: MemoryEngine,
    real: Embedder,
    embedder: CompositeEmbedder,
    work: Workload,
    scale: Scale,
    command: str,
    reuse: bool = False,
) -> Run:
    started = time.perf_counter()
    components = embedder.embed_components()
    components_seconds = time.perf_counter() - started
    facts = machine_facts(engine)
    retained = [
        (b, len(mems), retain_bank(engine, b, mems, reuse)) for b, mems in work.banks.items()
    ]
    with engine._pool.connection() as conn:
        conn.execute("ANALYZE")  # the planner's steady state: autovacuum would do it soon
        row = conn.execute("SELECT count(*) FROM memory_units").fetchone()
    latency = [
        measure_bank(engine, real, embedder, f"big-{n}", n, work.questions[f"big-{n}"])
        for n in scale.sizes
    ]
    largest = max(scale.sizes)
    explain_bank = f"big-{largest}" if largest >= EXPLAIN_MIN_SIZE else None
    explain = None
    if explain_bank is not None:
        explain = explain_semantic(engine, embedder, explain_bank, work.questions[explain_bank][0])
    overlap_result = [
        filtered_recall(engine, embedder, bank, questions)
        for bank, questions in work.overlap_banks.items()
    ]
    facts["load average at end"] = f"{os.getloadavg()[0]:.2f} (other processes share the CPU)"
    return Run(
        command=command,
        facts=facts,
        banks=retained,
        components=(components, components_seconds),
        table_rows=int(row[0]) if row else 0,
        latency=latency,
        explain_bank=explain_bank,
        explain=explain,
        overlap=overlap_result,
        reranker=engine.reranker_name,
    )


@dataclass
class DataDir:
    path: Path
    temporary: bool

    def cleanup(self, keep: bool) -> None:
        # A directory the user named is theirs: only a temporary one is removed.
        if self.temporary and not keep:
            shutil.rmtree(self.path, ignore_errors=True)


def data_dir(given: Path | None) -> DataDir:
    if given is not None:
        return DataDir(given, temporary=False)
    return DataDir(Path(tempfile.mkdtemp(prefix="htr-", dir="/tmp")), temporary=True)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    scale = scale_of(args)
    command = shlex.join(sys.orig_argv)
    store = data_dir(args.data_dir)
    try:
        settings = Settings(data_dir=store.path)
        if args.reranker:
            settings = settings.with_overrides({"reranker_provider": args.reranker})
        real = default_embedder(settings.embeddings_model, settings.embeddings_batch_size)
        real.embed(["warm-up"])  # model load is not part of any measurement
        embedder = CompositeEmbedder(real, args.seed)
        work = make_workload(scale, args.seed, embedder)
        with MemoryEngine(settings=settings, embedder=embedder) as engine:
            run = run_benchmark(engine, real, embedder, work, scale, command, args.reuse)
    finally:
        store.cleanup(args.keep)
    report = render(run)
    print(report)
    if args.out is not None:
        args.out.write_text(report + "\n")
    if args.keep and store.temporary:
        print(f"\n(data kept in {store.path})", file=sys.stderr)


if __name__ == "__main__":
    main()

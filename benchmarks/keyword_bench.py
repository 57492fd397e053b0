"""The keyword arm past its bound: exact BM25 next to the bounded form, on a big bank.

    .venv/bin/python -m benchmarks.keyword_bench --store DIR [--big 300000]
        [--bounds 10000 20000 40000] [--queries 100] [--limit 300] [--out FILE] [--seed 7]

``DIR`` is the ``one-big`` store of :mod:`benchmarks.scale_bench` built with the same
``--big`` and ``--seed``; the questions are that benchmark's. Each question runs through the
keyword arm once per configuration, the configurations in turn within a question, so the
host's load falls on all of them alike: first a round to warm the caches, then the measured
one. *Exact* is the same backend with a bound no question reaches. Reported per
configuration: p50 and p95 ms of the arm's two statements alone (no other arm beside
them), the questions that took the bounded form, and the share of the exact form's top 10
and top 50 (all fact types, by score) that it returns too.

The bound is ``HINDSIGHT_API_BM25_EXACT_POSTINGS`` (docs/configuration.md); why the
bounded form exists: ``hindsight_tools/recall/arms/bm25.py``.
"""

from __future__ import annotations

import argparse
import random
import shlex
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.recall_bench import machine_facts
from benchmarks.recall_bench_data import make_memories, make_questions, make_vocabulary
from benchmarks.recall_bench_vectors import CompositeEmbedder
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.cli.commands import positive_int
from hindsight_tools.encoders.embedding import default_embedder
from hindsight_tools.models import FACT_TYPES
from hindsight_tools.recall.arms.bm25 import (
    Bm25Backend,
    KeywordQuery,
    opening_terms,
    rarest_terms,
)
from hindsight_tools.recall.arms.filters import Scope

BANK = "big"
EXACT = 10**12
HEADS = (10, 50)


@dataclass
class Config:
    bound: int
    seconds: list[float] = field(default_factory=list)
    agreement: dict[int, list[float]] = field(default_factory=dict)
    bounded: int = 0

    @property
    def name(self) -> str:
        return "exact" if self.bound == EXACT else f"bound {self.bound:,}"


def ranked(engine: MemoryEngine, backend: Bm25Backend, query: KeywordQuery) -> list[str]:
    rows = engine._run(backend.plan(query))
    return [memory for memory, _ in sorted(rows, key=lambda r: (-r[1], r[0]))]


def measure(
    engine: MemoryEngine, questions: Sequence[str], bounds: Sequence[int], limit: int
) -> list[Config]:
    configs = [Config(EXACT), *(Config(b) for b in bounds)]
    for measured in (False, True):
        for text in questions:
            query = KeywordQuery(BANK, text, FACT_TYPES, Scope(), limit, "english")
            postings = [df for _, df in engine._run(rarest_terms(query))]
            exact: list[str] = []
            for config in configs:
                start = time.perf_counter()
                got = ranked(engine, Bm25Backend(exact_postings=config.bound), query)
                elapsed = time.perf_counter() - start
                if config.bound == EXACT:
                    exact = got
                if not measured:
                    continue
                config.seconds.append(elapsed)
                for k in HEADS:
                    head = set(exact[:k])
                    share = len(head & set(got[:k])) / len(head) if head else 1.0
                    config.agreement.setdefault(k, []).append(share)
                config.bounded += opening_terms(postings, config.bound) < len(postings)
    return configs


def render(command: str, facts: dict[str, str], size: int, configs: Sequence[Config]) -> str:
    lines = [
        "# Keyword arm: exact BM25 and its bounded form",
        "",
        f"`{command}`",
        "",
        *(f"- {k}: {v}" for k, v in facts.items()),
        f"- bank `{BANK}` of {size:,} memories; {len(configs[0].seconds)} questions of the "
        "scale benchmark; the arm's statements alone, second of two rounds",
        "",
        "| configuration | p50 ms | p95 ms | questions bounded | top 10 kept | top 50 kept |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for c in configs:
        ms = sorted(s * 1000 for s in c.seconds)
        p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
        kept = " | ".join(f"{statistics.mean(c.agreement[k]):.3f}" for k in HEADS)
        lines.append(
            f"| {c.name} | {statistics.median(ms):.1f} | {p95:.1f} | {c.bounded} | {kept} |"
        )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="a scale_bench one-big store")
    parser.add_argument("--big", type=positive_int, default=300_000)
    parser.add_argument("--bounds", type=positive_int, nargs="+", default=[10_000, 20_000, 40_000])
    parser.add_argument("--queries", type=positive_int, default=100)
    parser.add_argument("--limit", type=positive_int, default=300, help="the arm's limit (mid)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> str:
    args = parse_args(argv)
    command = shlex.join(["python", "-m", "benchmarks.keyword_bench", *(argv or sys.argv[1:])])
    vocab = make_vocabulary(random.Random(args.seed))
    memories = make_memories(BANK, args.big, vocab, args.seed)
    questions = [q.text for q in make_questions(memories, args.queries, vocab, args.seed)]
    settings = Settings(data_dir=args.store)
    embedder = CompositeEmbedder(default_embedder(settings.embeddings_model, 64), args.seed)
    with MemoryEngine(settings=settings, embedder=embedder) as engine:
        with engine._pool.connection() as conn:
            row = conn.execute("SELECT doc_count FROM banks WHERE bank_id = %s", (BANK,)).fetchone()
        if row is None or row[0] != args.big:
            raise SystemExit(f"{args.store} holds no bank {BANK!r} of {args.big:,} memories")
        facts = machine_facts(engine)
        configs = measure(engine, questions, args.bounds, args.limit)
    report = render(command, facts, args.big, configs)
    if args.out is not None:
        args.out.write_text(report + "\n")
    print(report)
    return report


if __name__ == "__main__":
    main()

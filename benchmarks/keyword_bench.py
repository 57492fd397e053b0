"""The keyword arm past its bound: exact BM25 next to the bounded form, on a big bank.

    .venv/bin/python -m benchmarks.keyword_bench --store DIR [--big 300000]
        [--bounds 10000 20000 40000] [--queries 100] [--limit 300] [--out FILE] [--seed 7]
        [--question-seed N]

``DIR`` is the ``one-big`` folder of :mod:`benchmarks.scale_bench`'s ``--data-dir``, built
with the same ``--big`` and ``--seed``; the questions are that benchmark's, or with
``--question-seed`` others about the same bank (to confirm a bound on questions it was not
chosen on; the scale benchmark warms up with those of seed + 1). Each question
runs through the keyword arm once per configuration, the configurations in turn within a
question (the order rotated from one question to the next), so the host's load falls on all
of them alike: first a round to warm the caches, then the measured one. *Exact* is the same
backend with a bound no question reaches. Reported per configuration: p50 and p95 ms of the
arm alone (its two statements through the engine's pool, no other arm beside it), the
questions that took the bounded form, and the share of the exact form's top 10 and top 50
(all fact types, by score) that it returns too; then the same over the bounded questions
alone, with the postings of the opening terms (summed for every memory they reach) and of
the late ones (summed for the candidates only), and how many of those questions had their
candidates cut to the bound (the rarest term alone past it).

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
from benchmarks.recall_bench_timing import settled_heap
from benchmarks.recall_bench_vectors import CompositeEmbedder
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.cli.commands import positive_int
from hindsight_tools.encoders.embedding import default_embedder
from hindsight_tools.evaluation import latency_percentiles
from hindsight_tools.models import FACT_TYPES
from hindsight_tools.recall.arms.bm25 import Bm25Backend, KeywordQuery, rarest_terms
from hindsight_tools.recall.arms.filters import Scope

BANK = "big"
EXACT = 10**12
HEADS = (10, 50)


@dataclass
class Config:
    bound: int
    seconds: list[float] = field(default_factory=list)
    kept: dict[int, list[float]] = field(default_factory=dict)
    bounded: list[bool] = field(default_factory=list)
    reads: list[tuple[int, int]] = field(default_factory=list)  # bounded questions
    cut: list[bool] = field(default_factory=list)  # bounded questions: candidates cut

    @property
    def name(self) -> str:
        return "exact" if self.bound == EXACT else f"bound {self.bound:,}"

    @property
    def backend(self) -> Bm25Backend:
        return Bm25Backend(exact_postings=self.bound)


def measure(
    engine: MemoryEngine, questions: Sequence[str], bounds: Sequence[int], limit: int
) -> list[Config]:
    configs = [Config(EXACT), *(Config(b) for b in bounds)]
    with settled_heap():
        _measure(engine, questions, configs, limit)
    return configs


def _measure(
    engine: MemoryEngine, questions: Sequence[str], configs: list[Config], limit: int
) -> None:
    for measured in (False, True):
        for i, text in enumerate(questions):
            query = KeywordQuery(BANK, text, FACT_TYPES, Scope(), limit, "english")
            ranked = engine._run(rarest_terms(query))
            results: dict[int, list[str]] = {}
            # in turn, starting one further each question: none always finds the
            # postings just read by another
            for config in configs[i % len(configs) :] + configs[: i % len(configs)]:
                start = time.perf_counter()
                rows = engine._run(config.backend.plan(query))
                elapsed = time.perf_counter() - start
                results[config.bound] = [m for m, _ in sorted(rows, key=lambda r: (-r[1], r[0]))]
                if measured:
                    config.seconds.append(elapsed)
            if not measured:
                continue
            exact = results[EXACT]
            postings = [df for _, df in ranked]
            for config in configs:
                opening = config.backend.opening(postings)
                config.bounded.append(opening < len(ranked))
                if opening < len(ranked):
                    config.reads.append((sum(postings[:opening]), sum(postings[opening:])))
                    config.cut.append(sum(postings[:opening]) > config.bound)
                for k in HEADS:
                    head = set(exact[:k])
                    share = len(head & set(results[config.bound][:k])) / len(head) if head else 1.0
                    config.kept.setdefault(k, []).append(share)


def _ms(seconds: Sequence[float]) -> str:
    p = latency_percentiles(seconds)
    return " | ".join(f"{v * 1000:.1f}" for v in p) if p else "– | –"


def render(
    command: str,
    facts: dict[str, str],
    size: int,
    limit: int,
    configs: Sequence[Config],
    question_seed: int,
) -> str:
    exact = configs[0]
    lines = [
        "# Keyword arm: exact BM25 and its bounded form",
        "",
        f"`{command}`",
        "",
        *(f"- {k}: {v}" for k, v in facts.items()),
        f"- bank `{BANK}` of {size:,} memories; {len(exact.seconds)} questions of the scale "
        f"benchmark's generator (seed {question_seed}); the arm's limit {limit} per fact type "
        "(budget mid); the arm alone, run through the engine's pool, second of two rounds",
        "",
        "All questions:",
        "",
        "| configuration | p50 ms | p95 ms | questions bounded | top 10 kept | top 50 kept |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for c in configs:
        kept = " | ".join(f"{statistics.mean(c.kept[k]):.3f}" for k in HEADS)
        lines.append(f"| {c.name} | {_ms(c.seconds)} | {sum(c.bounded)} | {kept} |")
    lines += [
        "",
        "The questions each bound takes to the bounded form, against exact on the same "
        "questions (postings: mean per question):",
        "",
        "| configuration | questions | exact p50 / p95 ms | bounded p50 / p95 ms "
        "| top 10 kept | top 50 kept | opening postings | late postings | candidates cut |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in configs[1:]:
        picked = [i for i, b in enumerate(c.bounded) if b]
        if not picked:
            lines.append(f"| {c.name} | 0 | | | | | | | |")
            continue
        kept = " | ".join(f"{statistics.mean(c.kept[k][i] for i in picked):.3f}" for k in HEADS)
        reads = " | ".join(f"{statistics.mean(r[j] for r in c.reads):,.0f}" for j in range(2))
        mine = _ms([c.seconds[i] for i in picked]).replace(" | ", " / ")
        theirs = _ms([exact.seconds[i] for i in picked]).replace(" | ", " / ")
        lines.append(
            f"| {c.name} | {len(picked)} | {theirs} | {mine} | {kept} | {reads} | {sum(c.cut)} |"
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
    parser.add_argument("--seed", type=int, default=7, help="the store's seed")
    parser.add_argument("--question-seed", type=int, help="the questions' (default: --seed)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> str:
    args = parse_args(argv)
    command = shlex.join(["python", "-m", "benchmarks.keyword_bench", *(argv or sys.argv[1:])])
    vocab = make_vocabulary(random.Random(args.seed))
    memories = make_memories(BANK, args.big, vocab, args.seed)
    seed = args.seed if args.question_seed is None else args.question_seed
    questions = [q.text for q in make_questions(memories, args.queries, vocab, seed)]
    settings = Settings(data_dir=args.store)
    embedder = CompositeEmbedder(default_embedder(settings.embeddings_model, 64), args.seed)
    with MemoryEngine(settings=settings, embedder=embedder) as engine:
        with engine._pool.connection() as conn:
            row = conn.execute("SELECT doc_count FROM banks WHERE bank_id = %s", (BANK,)).fetchone()
        if row is None or row[0] != args.big:
            raise SystemExit(f"{args.store} holds no bank {BANK!r} of {args.big:,} memories")
        facts = machine_facts(engine)
        configs = measure(engine, questions, args.bounds, args.limit)
    report = render(command, facts, args.big, args.limit, configs, seed)
    if args.out is not None:
        args.out.write_text(report + "\n")
    print(report)
    return report


if __name__ == "__main__":
    main()

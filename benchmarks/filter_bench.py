"""The cost of recall filters on a large bank: each arm and end to end, next to unfiltered recall.

    .venv/bin/python benchmarks/filter_bench.py [--size 100000] [--queries 100]
        [--data-dir DIR] [--reuse] [--build-only] [--out FILE] [--seed 7]

(or ``python -m benchmarks.filter_bench``, the same arguments).

Data. One bank of ``--size`` memories from the recall benchmark's generator
(:mod:`benchmarks.recall_bench_data`: invented people, places and activities, dated over
three years), each with metadata ``{"user": "u<k>", "team": {"name": ...}, "priority": 0-5,
"labels": [...]}`` drawn from a seeded ``random.Random``. Users are uniform over 100, so
``{"user": "u7"}`` keeps about 1% of the bank (the *selective* filter); priorities are
uniform over 0-5, so ``{"priority": {"$gte": 3}}`` keeps about half (the *broad* one); the
date range is March 2024, about 3% of the three years. Memory ``i`` depends only on the
seed and ``i``, so a bank of 50,000 is the first half of one of 100,000.

Embeddings. :class:`HashingEmbedder` gives each word a fixed random unit vector (seeded by
the word) and a text the normalised sum of its words' vectors: texts sharing words are near,
the way the real model's are for these templated texts, and 100,000 of them embed in
seconds. No model is loaded: recall's embed stage costs next to nothing here, which is
right for a measurement of what the filters cost. Reranking is ``passthrough`` and late
interaction off, for the same reason.

Measured, after ``ANALYZE``, per question and configuration in turn (so background load hits
every configuration alike): wall time and the traced per-arm seconds of ``recall(...,
trace=True)`` at the mid budget; the memories returned; and whether each satisfies its
filter (a violation is a returned memory that doesn't). Then the plan of the semantic arm and
of a plain ``SELECT`` with the selective filter, and two listings (``list_memories``).

Retaining is by far the longest part (tens of minutes for 100,000 memories on 2 cores).
``--data-dir DIR --reuse`` keeps the store: a bank holding exactly the expected memories is
used as is, a partial one is completed (or trimmed) to ``--size``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if not __package__:
    # Run as a file, Python puts this folder on sys.path rather than the repository.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from psycopg import sql
from tqdm import tqdm

from benchmarks.machine import _cpu, _memory
from benchmarks.recall_bench_data import (
    NOW,
    Memory,
    make_memories,
    make_questions,
    make_vocabulary,
)
from benchmarks.recall_bench_timing import _explained, _run, settled_heap
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.encoders.embedding import Vectors
from hindsight_tools.models import RecalledMemory, RecallRequest
from hindsight_tools.query.metadata_filter import parse_filter
from hindsight_tools.recall.arms.filters import Scope, request_scope, scope_condition
from hindsight_tools.recall.budget import recall_budget
from hindsight_tools.recall.pipeline import arm_plans

BANK = "filter-bench"
DIMENSION = 384
RETAIN_BATCH = 1000
WARM_UP = 5
ARMS = ("semantic", "bm25", "graph", "temporal")
USERS = 100
TEAMS = ("core", "search", "billing", "mobile", "infra", "design", "data", "support")
LABELS = ("urgent", "review", "idea", "bug", "followup", "personal", "meeting", "travel")
SELECTIVE: dict[str, Any] = {"user": "u7"}
BROAD: dict[str, Any] = {"priority": {"$gte": 3}}
MONTH = (datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 4, 1, tzinfo=UTC))
LIST_LIMIT = 100
DEEP_OFFSET = 5000
VECTOR_LITERAL = re.compile(r"'\[[^\]]*\]'::vector")

# --- data ----------------------------------------------------------------------------------


class HashingEmbedder:
    """Deterministic text vectors without a model: the normalised sum of per-word vectors."""

    name = "hashing"
    dimension = DIMENSION

    def __init__(self, seed: int = 7) -> None:
        self._seed = seed
        self._words: dict[str, Vectors] = {}

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = np.zeros((len(texts), self.dimension), dtype=np.float64)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9']+", text.lower()):
                rows[i] += self._word(word)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        norms[norms == 0] = 1.0  # a text without words is the zero vector, left as is
        vectors: Vectors = (rows / norms).astype(np.float32)
        return vectors

    def _word(self, word: str) -> Vectors:
        vector = self._words.get(word)
        if vector is None:
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            rng = np.random.default_rng([self._seed, int.from_bytes(digest, "big")])
            raw = rng.normal(size=self.dimension)
            vector = raw / np.linalg.norm(raw)
            self._words[word] = vector
        return vector


def metadata_of(memory: Memory, seed: int) -> dict[str, Any]:
    """The memory's metadata, seeded by its id alone (a bank prefix keeps its metadata)."""
    rng = random.Random(f"{seed}:metadata:{memory.id}")
    return {
        "user": f"u{rng.randrange(USERS)}",
        "team": {"name": rng.choice(TEAMS)},
        "priority": rng.randrange(6),
        "labels": rng.sample(LABELS, rng.randrange(3)),
    }


def make_items(size: int, seed: int) -> tuple[list[dict[str, Any]], list[Memory]]:
    vocab = make_vocabulary(random.Random(seed))
    memories = make_memories(BANK, size, vocab, seed)
    items = [{**m.item(), "metadata": metadata_of(m, seed)} for m in memories]
    return items, memories


# --- the configurations --------------------------------------------------------------------


def _in_month(m: RecalledMemory) -> bool:
    # every memory here has an occurred_start and nothing else: its span is that instant
    return m.occurred_start is not None and MONTH[0] <= m.occurred_start < MONTH[1]


def _selective(m: RecalledMemory) -> bool:
    return bool(m.metadata.get("user") == SELECTIVE["user"])


def _broad(m: RecalledMemory) -> bool:
    priority = m.metadata.get("priority")
    return isinstance(priority, int) and priority >= 3


@dataclass(frozen=True)
class Config:
    name: str
    filters: Mapping[str, Any]  # keyword arguments of recall
    satisfies: Callable[[RecalledMemory], bool]
    described: str


CONFIGS = (
    Config("unfiltered", {}, lambda m: True, "no filter"),
    Config("selective metadata", {"metadata_filter": SELECTIVE}, _selective, '`{"user": "u7"}`'),
    Config("broad metadata", {"metadata_filter": BROAD}, _broad, '`{"priority": {"$gte": 3}}`'),
    Config(
        "date range",
        {"occurred_after": MONTH[0], "occurred_before": MONTH[1]},
        _in_month,
        "occurred in March 2024",
    ),
    Config(
        "selective + date",
        {"metadata_filter": SELECTIVE, "occurred_after": MONTH[0], "occurred_before": MONTH[1]},
        lambda m: _selective(m) and _in_month(m),
        '`{"user": "u7"}` and March 2024',
    ),
)


def config_scope(config: Config) -> Scope:
    raw = config.filters.get("metadata_filter")
    return Scope(
        metadata=None if raw is None else parse_filter(raw),
        occurred_after=config.filters.get("occurred_after"),
        occurred_before=config.filters.get("occurred_before"),
    )


# --- building the bank -----------------------------------------------------------------------


@dataclass
class Build:
    size: int
    retained: int  # memories retained by this run (0: the bank was reused as it was)
    deleted: int
    seconds: float


def build_bank(
    engine: MemoryEngine, items: Sequence[dict[str, Any]], reuse: bool, quiet: bool = False
) -> Build:
    """Make the bank hold exactly ``items``: from scratch, or (``reuse``) completing or
    trimming what an earlier run left."""
    if not reuse:
        engine.delete_bank(BANK)
    with engine._pool.connection() as conn:
        rows = conn.execute("SELECT id FROM memory_units WHERE bank_id = %s", (BANK,)).fetchall()
    held = {str(r[0]) for r in rows}
    wanted = {str(item["id"]) for item in items}
    surplus = sorted(held - wanted)
    if surplus:
        engine.delete_memories(BANK, surplus)
    missing = [item for item in items if item["id"] not in held]
    started = time.perf_counter()
    with tqdm(total=len(missing), unit="memory", desc="retain", disable=quiet) as bar:
        for start in range(0, len(missing), RETAIN_BATCH):
            batch = missing[start : start + RETAIN_BATCH]
            engine.retain(BANK, batch)
            bar.update(len(batch))
    return Build(len(items), len(missing), len(surplus), time.perf_counter() - started)


# --- the measurements ------------------------------------------------------------------------


@dataclass
class Sample:
    wall: float
    arms: dict[str, float]
    returned: int
    violations: int


@dataclass
class Results:
    matching: dict[str, int]  # config -> memories of the bank that pass its filter
    samples: dict[str, list[Sample]] = field(default_factory=dict)
    explain_plain: list[str] = field(default_factory=list)
    explain_semantic: list[str] = field(default_factory=list)
    listings: list[tuple[str, int, int, float]] = field(default_factory=list)


def count_matching(engine: MemoryEngine, config: Config) -> int:
    condition, params = scope_condition("m", config_scope(config))
    query = sql.SQL("SELECT count(*) FROM memory_units m WHERE m.bank_id = %(bank)s AND {}")
    with engine._pool.connection() as conn:
        row = conn.execute(query.format(condition), {"bank": BANK, **params}).fetchone()
    return int(row[0]) if row else 0


def time_recall(engine: MemoryEngine, question: str, config: Config) -> Sample:
    started = time.perf_counter()
    result = engine.recall(
        BANK, question, budget="mid", trace=True, query_timestamp=NOW, **config.filters
    )
    wall = time.perf_counter() - started
    assert result.trace is not None
    arms = {name: arm.seconds for name, arm in result.trace.arms.items()}
    bad = sum(1 for m in result.memories if not config.satisfies(m))
    return Sample(wall, arms, len(result.memories), bad)


def explain_plain(engine: MemoryEngine, config: Config) -> list[str]:
    condition, params = scope_condition("m", config_scope(config))
    query = sql.SQL("EXPLAIN SELECT id FROM memory_units m WHERE m.bank_id = %(bank)s AND {}")
    with engine._pool.connection() as conn:
        rows = conn.execute(query.format(condition), {"bank": BANK, **params}).fetchall()
    return [str(r[0]) for r in rows]


def explain_semantic(engine: MemoryEngine, question: str, config: Config) -> list[str]:
    """EXPLAIN of the semantic arm's query as a filtered recall at the mid budget builds it."""
    services = engine._core.recall_services
    request = RecallRequest(query=question, budget="mid", **config.filters)
    request_scope(request)  # the filter parses, as recall would check it
    limit = recall_budget(request.budget, request.max_tokens, services.settings)
    vector = services.embedder.embed([question])[0]
    plans = arm_plans(services, BANK, request, question, vector, None, limit)
    for name, plan in plans.items():
        if name != "semantic":
            plan.close()
    lines: list[str] = _run(engine, _explained(plans["semantic"], "COSTS true"))
    # the question's 384 numbers say nothing about the plan
    return [VECTOR_LITERAL.sub("'[…]'::vector", line) for line in lines]


def time_listings(engine: MemoryEngine) -> list[tuple[str, int, int, float]]:
    """(what, offset, memories, seconds) of two pages, each the best of three calls."""
    out = []
    for what, raw, offset in (
        ("selective, first page", SELECTIVE, 0),
        ("broad, deep page", BROAD, DEEP_OFFSET),
    ):
        best = float("inf")
        got = 0
        for _ in range(3):
            started = time.perf_counter()
            page = engine.list_memories(BANK, metadata_filter=raw, limit=LIST_LIMIT, offset=offset)
            best = min(best, time.perf_counter() - started)
            got = len(page)
        out.append((what, offset, got, best))
    return out


def measure(engine: MemoryEngine, questions: Sequence[str], quiet: bool = False) -> Results:
    results = Results({c.name: count_matching(engine, c) for c in CONFIGS})
    for question in questions[:WARM_UP]:  # caches and the pool, not measured
        for config in CONFIGS:
            time_recall(engine, question, config)
    results.samples = {c.name: [] for c in CONFIGS}
    with settled_heap():
        for question in tqdm(questions, unit="question", desc="recall", disable=quiet):
            for config in CONFIGS:  # interleaved: load on the machine hits every one alike
                results.samples[config.name].append(time_recall(engine, question, config))
    selective = CONFIGS[1]
    results.explain_plain = explain_plain(engine, selective)
    results.explain_semantic = explain_semantic(engine, questions[0], selective)
    results.listings = time_listings(engine)
    return results


# --- the report ------------------------------------------------------------------------------


def machine_facts(engine: MemoryEngine) -> dict[str, str]:
    with engine._pool.connection() as conn:
        server = conn.execute("SHOW server_version").fetchone()
        vector = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        buffers = conn.execute("SHOW shared_buffers").fetchone()
    return {
        "CPU": f"{_cpu()}, {os.cpu_count()} cores, {_memory()} RAM",
        "PostgreSQL": f"{server[0] if server else '?'} (shared_buffers "
        f"{buffers[0] if buffers else '?'}), pgvector {vector[0] if vector else '?'}",
        "Python": sys.version.split()[0],
        "load average at start": f"{os.getloadavg()[0]:.2f}",
    }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="memories in the bank")
    parser.add_argument("--queries", type=int, default=100, help="questions per configuration")
    parser.add_argument("--data-dir", type=Path, help="use (and keep) this data directory")
    parser.add_argument("--database-url", help="an external PostgreSQL instead")
    parser.add_argument(
        "--reuse", action="store_true", help="keep what the bank already holds of the data"
    )
    parser.add_argument("--build-only", action="store_true", help="fill the bank, then stop")
    parser.add_argument("--out", type=Path, help="also write the report here")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args(argv)


def recorded_command(argv: Sequence[str] | None) -> str:
    """The command line as the report shows it: the script path relative, and the folders
    and URL of this machine as placeholders."""
    args = list(sys.argv[1:] if argv is None else argv)
    for i, arg in enumerate(args[:-1]):
        placeholder = {"--data-dir": "DIR", "--out": "FILE", "--database-url": "URL"}.get(arg)
        if placeholder is not None:
            args[i + 1] = placeholder
    return shlex.join([".venv/bin/python", "benchmarks/filter_bench.py", *args])


def main(argv: Sequence[str] | None = None) -> str:
    from benchmarks.filter_bench_report import render  # it reads this module's tables

    args = parse_args(argv)
    temporary = args.data_dir is None and args.database_url is None
    # short, as the embedded server keeps its socket in the data directory
    folder = Path(tempfile.mkdtemp(prefix="hfb-", dir="/tmp")) if temporary else args.data_dir
    try:
        # what is measured is the filters' cost, not the cross-encoder's or MaxSim's
        changes: dict[str, Any] = {"late_interaction": False, "reranker_provider": "passthrough"}
        if folder is not None:
            changes["data_dir"] = folder
        settings = Settings(database_url=args.database_url).with_overrides(changes)
        embedder = HashingEmbedder(args.seed)
        items, memories = make_items(args.size, args.seed)
        vocab = make_vocabulary(random.Random(args.seed))
        questions = [q.text for q in make_questions(memories, args.queries, vocab, args.seed)]
        with MemoryEngine(settings=settings, embedder=embedder) as engine:
            facts = machine_facts(engine)
            build = build_bank(engine, items, args.reuse or args.build_only, args.quiet)
            if args.build_only:
                return ""
            with engine._pool.connection() as conn:
                conn.execute("ANALYZE memory_units")
            results = measure(engine, questions, args.quiet)
            facts["load average at end"] = f"{os.getloadavg()[0]:.2f}"
    finally:
        if temporary and folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    report = render(recorded_command(argv), facts, build, args.size, results)
    print(report)
    if args.out is not None:
        args.out.write_text(report + "\n")
    return report


if __name__ == "__main__":
    main()

"""Load: concurrent recalls and retains against one engine for a bounded time.

    .venv/bin/python benchmarks/load.py [--seconds 60] [--threads 4] [--tasks 4]
                                        [--data-dir DIR | --database-url URL]

Threads call the sync ``MemoryEngine`` and asyncio tasks its async twin, at the same time, on
one bank that starts with the demo memories. Each worker's first call and every
``--retain-every``-th after it retain 1-3 new memories with fresh ids; the others recall.
Afterwards every retain that was acknowledged is read back: each id must be in the store with
its text, and a sample must be found by recall. Prints throughput, p50/p95 per kind of call,
errors (target 0) and missing memories (must be 0); exits 1 if either is not 0.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hindsight_tools import AsyncMemoryEngine, MemoryEngine, Settings
from hindsight_tools.cli.demo import DEMO_QUERIES, demo_items

PEOPLE = ("Priya", "Marco", "Daniel", "Aiko", "Lena", "Tomás")
PLACES = ("Toronto", "Amsterdam", "Lisbon", "Osaka", "Nairobi", "Quito")
DOINGS = ("took a pottery class", "ran a half marathon", "adopted a cat", "started a new job")
QUERIES = (*(q for _, q in DEMO_QUERIES), "Who ran a marathon?", "What happened in Lisbon?")


@dataclass
class Tally:
    """What every worker saw; appended to from threads and tasks under one lock."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    acknowledged: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, seconds: float) -> None:
        with self.lock:
            self.latencies.setdefault(kind, []).append(seconds)

    def fail(self, kind: str, exc: BaseException) -> None:
        with self.lock:
            self.errors.append(f"{kind}: {type(exc).__name__}: {exc}")

    def acknowledge(self, items: Sequence[dict[str, Any]]) -> None:
        with self.lock:
            self.acknowledged.update((item["id"], item["text"]) for item in items)


@dataclass(frozen=True)
class Report:
    seconds: float
    latencies: dict[str, list[float]]
    errors: list[str]
    acknowledged: int
    missing: list[str]

    @property
    def ok(self) -> bool:
        return not self.errors and not self.missing

    def lines(self) -> list[str]:
        calls = sum(len(v) for v in self.latencies.values())
        out = [f"{calls} calls in {self.seconds:.1f} s = {calls / self.seconds:.1f} calls/s"]
        for kind in sorted(self.latencies):
            values = self.latencies[kind]
            out.append(
                f"  {kind:<16} {len(values):>6} calls {len(values) / self.seconds:>7.2f}/s "
                f"p50 {_ms(values, 50):>7} p95 {_ms(values, 95):>7}"
            )
        out.append(f"errors: {len(self.errors)}")
        out.extend(f"  {e}" for e in self.errors[:10])
        out.append(
            f"acknowledged retains: {self.acknowledged} memories, missing: {len(self.missing)}"
        )
        out.extend(f"  missing {m}" for m in self.missing[:10])
        return out


def new_items(rng: random.Random, worker: str) -> list[dict[str, Any]]:
    """1-3 memories with fresh ids; each text ends in a word of its own, so a recall of that
    text finds exactly that memory."""
    items = []
    for _ in range(rng.randint(1, 3)):
        person, place, doing = rng.choice(PEOPLE), rng.choice(PLACES), rng.choice(DOINGS)
        serial = uuid.uuid4().hex[:12]
        year, month, day = rng.randint(2020, 2024), rng.randint(1, 12), rng.randint(1, 28)
        items.append(
            {
                "id": f"load-{worker}-{serial}",
                "text": f"{person} {doing} in {place}, entry x{serial}",
                "occurred_start": f"{year}-{month:02d}-{day:02d}",
                "tags": [rng.choice(("load", "work", "home"))],
            }
        )
    return items


def _go_on(calls: int, every: int, deadline: float) -> bool:
    """Until the deadline, and for at least ``max(every, 2)`` calls: every worker retains
    and (with ``every`` ≥ 2) recalls at least once, however short the run."""
    return calls < max(every, 2) or time.monotonic() < deadline


def _sync_worker(
    engine: MemoryEngine, bank: str, deadline: float, every: int, tally: Tally, name: str
) -> None:
    rng = random.Random(name)
    call = 0
    while _go_on(call, every, deadline):
        call += 1
        retain = call % every == 1 % every
        kind = "retain (threads)" if retain else "recall (threads)"
        started = time.perf_counter()
        try:
            if retain:
                items = new_items(rng, name)
                engine.retain(bank, items)
                tally.acknowledge(items)
            else:
                engine.recall(bank, rng.choice(QUERIES), budget=rng.choice(("low", "mid")))
        except Exception as exc:  # a load test counts every failure, whatever its type
            tally.fail(kind, exc)
            continue
        tally.record(kind, time.perf_counter() - started)


async def _async_worker(
    engine: AsyncMemoryEngine, bank: str, deadline: float, every: int, tally: Tally, name: str
) -> None:
    rng = random.Random(name)
    call = 0
    while _go_on(call, every, deadline):
        call += 1
        retain = call % every == 1 % every
        kind = "retain (async)" if retain else "recall (async)"
        started = time.perf_counter()
        try:
            if retain:
                items = new_items(rng, name)
                await engine.retain(bank, items)
                tally.acknowledge(items)
            else:
                await engine.recall(bank, rng.choice(QUERIES), budget=rng.choice(("low", "mid")))
        except Exception as exc:
            tally.fail(kind, exc)
            continue
        tally.record(kind, time.perf_counter() - started)


async def _async_side(
    engine: MemoryEngine, bank: str, deadline: float, every: int, tally: Tally, tasks: int
) -> None:
    async with AsyncMemoryEngine(engine.database_url, settings=engine.settings) as aengine:
        await asyncio.gather(
            *(_async_worker(aengine, bank, deadline, every, tally, f"a{i}") for i in range(tasks))
        )


def run_load(
    engine: MemoryEngine,
    bank: str,
    *,
    seconds: float,
    threads: int,
    tasks: int,
    retain_every: int = 4,
) -> Report:
    """Seed ``bank``, run the workers until ``seconds`` have passed, then verify the store."""
    engine.retain(bank, demo_items())
    tally = Tally()
    deadline = time.monotonic() + seconds
    started = time.perf_counter()
    workers = [
        threading.Thread(
            target=_sync_worker, args=(engine, bank, deadline, retain_every, tally, f"t{i}")
        )
        for i in range(threads)
    ]
    if tasks:
        workers.append(
            threading.Thread(
                target=asyncio.run,
                args=(_async_side(engine, bank, deadline, retain_every, tally, tasks),),
            )
        )
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - started
    return Report(
        seconds=elapsed,
        latencies=tally.latencies,
        errors=tally.errors,
        acknowledged=len(tally.acknowledged),
        missing=verify(engine, bank, tally.acknowledged),
    )


def verify(engine: MemoryEngine, bank: str, acknowledged: dict[str, str]) -> list[str]:
    """Acknowledged ids not in the store with their text, or (for a sample) not recalled."""
    ids = list(acknowledged)
    with engine._pool.connection() as conn:
        rows = conn.execute(
            "SELECT id, text FROM memory_units WHERE bank_id = %s AND id = ANY(%s)", (bank, ids)
        ).fetchall()
    stored = {str(r[0]): str(r[1]) for r in rows}
    missing = [i for i in ids if stored.get(i) != acknowledged[i]]
    for memory_id in random.Random(0).sample(ids, min(len(ids), 5)):
        found = engine.recall(bank, acknowledged[memory_id], budget="low").memories
        if memory_id not in {m.id for m in found} and memory_id not in missing:
            missing.append(memory_id)
    return missing


def _ms(values: Sequence[float], q: float) -> str:
    return f"{np.percentile(values, q) * 1000:.0f} ms" if values else "-"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--threads", type=int, default=4, help="MemoryEngine threads")
    parser.add_argument("--tasks", type=int, default=4, help="AsyncMemoryEngine tasks")
    parser.add_argument("--retain-every", type=int, default=4, help="every Nth call retains")
    parser.add_argument("--data-dir", type=Path, help="embedded server folder (default: fresh)")
    parser.add_argument("--database-url", help="an external PostgreSQL instead")
    args = parser.parse_args(argv)

    temporary = None
    if args.database_url is None and args.data_dir is None:
        temporary = Path(tempfile.mkdtemp(prefix="htl-", dir="/tmp"))
    data_dir = args.data_dir or temporary
    settings = Settings(data_dir=data_dir) if data_dir else Settings()
    bank = f"load-{uuid.uuid4().hex[:8]}"
    try:
        with MemoryEngine(args.database_url, settings=settings) as engine:
            engine.recall(bank, "warm-up")  # model loads are not load-test time
            print(
                f"load: {args.threads} threads + {args.tasks} async tasks for "
                f"{args.seconds:g} s, reranker {engine.reranker_name}, "
                f"pool max {settings.pool_max_size} per engine"
            )
            try:
                report = run_load(
                    engine,
                    bank,
                    seconds=args.seconds,
                    threads=args.threads,
                    tasks=args.tasks,
                    retain_every=args.retain_every,
                )
            finally:
                engine.delete_bank(bank)
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
    print("\n".join(report.lines()))
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

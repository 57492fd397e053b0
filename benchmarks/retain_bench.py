"""Retain throughput on the LoCoMo dev set: memories/s end to end, split into embedding and DB.

    .venv/bin/python benchmarks/retain_bench.py [--data ../shared/data/locomo-dev] [--batch 256]

Each run starts from empty banks (they are deleted first) in a throw-away data directory,
so figures are comparable between runs. Links (semantic, temporal) are built as in normal use.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from tqdm import tqdm

from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.embedding import Vectors, default_embedder
from hindsight_tools.jsonl import item_from_record, read_records

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev"


class Spans:
    """(start, end) of every call of a wrapped encoder."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []

    @property
    def seconds(self) -> float:
        return sum(end - start for start, end in self.spans)

    def timed(self, call: Any, *args: Any) -> Any:
        started = time.perf_counter()
        try:
            return call(*args)
        finally:
            self.spans.append((started, time.perf_counter()))


def covered(*spans: Spans) -> float:
    """Seconds during which at least one of the encoders ran: retain runs the embedder and
    the late-interaction encoder side by side, so their own times overlap."""
    total, reach = 0.0, -1.0
    for start, end in sorted(s for group in spans for s in group.spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


class TimedEmbedder(Spans):
    """Wraps the real embedder and records the time spent in it."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self.timed(self.inner.embed, texts)  # type: ignore[no-any-return]


class TimedLate(Spans):
    """The late-interaction encoder's document call, timed (retain runs it per batch)."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self.inner = inner

    def __call__(self, texts: Any) -> Any:
        return self.timed(self.inner, texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()

    by_bank: dict[str, list[dict[str, Any]]] = {}
    for _, record in read_records(args.data / "memories.jsonl"):
        by_bank.setdefault(record["bank"], []).append(item_from_record(record))
    total = sum(len(v) for v in by_bank.values())

    data_dir = Path(tempfile.mkdtemp(prefix="htb-", dir="/tmp"))
    late_timer = TimedLate(None)
    late = None
    settings = Settings(data_dir=data_dir)
    embedder = TimedEmbedder(
        default_embedder(settings.embeddings_model, settings.embeddings_batch_size)
    )
    embedder.embed(["warm-up"])  # model load and first-call overhead are not retain time
    embedder.spans.clear()
    try:
        with MemoryEngine(settings=settings, embedder=embedder) as engine:
            late = engine._core.late_interaction
            if late is not None:
                late.encode_documents(["warm-up"])
                late_timer = TimedLate(late.encode_documents)
                late.encode_documents = late_timer  # type: ignore[method-assign]
            started = time.perf_counter()
            with tqdm(total=total, unit="memory", desc="retain") as bar:
                for bank, items in by_bank.items():
                    iterator = iter(items)
                    while batch := list(islice(iterator, args.batch)):
                        engine.retain(bank, batch)
                        bar.update(len(batch))
            elapsed = time.perf_counter() - started
            with engine._pool.connection() as conn:
                links = dict(
                    conn.execute(
                        "SELECT link_type, count(*) FROM memory_links GROUP BY link_type"
                    ).fetchall()
                )
    finally:
        if late is not None:
            late.encode_documents = late_timer.inner  # type: ignore[method-assign]
        shutil.rmtree(data_dir, ignore_errors=True)

    encoding = covered(embedder, late_timer)
    database = elapsed - encoding
    print(f"memories: {total} in {len(by_bank)} banks, batch size {args.batch}")
    print(f"end to end: {elapsed:.1f} s = {total / elapsed:.0f} memories/s")
    print(f"embedding:  {embedder.seconds:.1f} s = {total / embedder.seconds:.0f} memories/s")
    if late is not None:
        print(
            f"late interaction: {late_timer.seconds:.1f} s = "
            f"{total / late_timer.seconds:.0f} memories/s (token vectors, int8 ColBERT)"
        )
        print(f"encoding, both models side by side: {encoding:.1f} s of wall time")
    print(
        f"database:   {database:.1f} s = {total / database:.0f} memories/s "
        f"(entities, chunks, links included)"
    )
    print(f"links: {links}")


if __name__ == "__main__":
    main()

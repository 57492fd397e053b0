"""Retain throughput on the LoCoMo dev set: memories/s end to end, split into embedding and DB.

    .venv/bin/python benchmarks/retain_bench.py --data DIR [--batch 256]

``--data`` is the LoCoMo folder (its ``memories.jsonl``); without it,
``$HINDSIGHT_LOCOMO_DIR``.

Each run starts from empty banks (they are deleted first) in a throw-away data directory,
so figures are comparable between runs. Links (semantic, temporal) are built as in normal use.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from tqdm import tqdm

from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.encoders.embedding import Vectors, default_embedder
from hindsight_tools.jsonl import item_from_record, read_records

LOCOMO_VARIABLE = "HINDSIGHT_LOCOMO_DIR"  # the LoCoMo data is not in the repository


class TimedEmbedder:
    """Wraps the real embedder and adds up the time spent in it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.name = inner.name
        self.dimension = inner.dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)  # type: ignore[no-any-return]
        finally:
            self.seconds += time.perf_counter() - started


class TimedLate:
    """The late-interaction encoder's document call, timed (retain runs it per batch)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0

    def __call__(self, texts: Any) -> Any:
        started = time.perf_counter()
        try:
            return self.inner(texts)
        finally:
            self.seconds += time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=os.environ.get(LOCOMO_VARIABLE),
        help=f"LoCoMo folder (default: ${LOCOMO_VARIABLE})",
    )
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    if args.data is None:
        parser.error(
            f"no LoCoMo folder: give --data DIR or set {LOCOMO_VARIABLE} (the LoCoMo data is "
            "CC BY-NC and not part of the repository)"
        )

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
    embedder.seconds = 0.0
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

    database = elapsed - embedder.seconds - late_timer.seconds
    print(f"memories: {total} in {len(by_bank)} banks, batch size {args.batch}")
    print(f"end to end: {elapsed:.1f} s = {total / elapsed:.0f} memories/s")
    print(f"embedding:  {embedder.seconds:.1f} s = {total / embedder.seconds:.0f} memories/s")
    if late is not None:
        print(
            f"late interaction: {late_timer.seconds:.1f} s = "
            f"{total / late_timer.seconds:.0f} memories/s (token vectors, int8 ColBERT)"
        )
    print(
        f"database:   {database:.1f} s = {total / database:.0f} memories/s "
        f"(entities, chunks, links included)"
    )
    print(f"links: {links}")


if __name__ == "__main__":
    main()

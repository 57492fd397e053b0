"""Import throughput on real data sets' memories, their vectors given.

    .venv/bin/python -m benchmarks.import_data_bench NAME=FILE [NAME=FILE ...] [--runs 3]
        [--batch 1000] [--out FILE]

Each FILE is a retain file (JSON Lines as `hindsight-tools retain` reads them, e.g. the
converted LoCoMo or BEAM `memories.jsonl`). Its texts are embedded once with the store's
model, untimed; then all of its memories, with those vectors, are imported into one bank
of a fresh store with the search indexes set aside and into another fresh store with them
kept, the two in turn, `--runs` times. The time is that of `import_memories`, the index
builds after the load included. Lines longer than the store takes
(`HINDSIGHT_API_RETAIN_MAX_TEXT_CHARS`) are left out, and counted. The synthetic import
benchmark (`benchmarks/import_bench.py`) has one-sentence memories; here the memories are
as long as the data's, and their keyword postings and entity mentions as many.

The report holds figures only, no text of the data, so it may be kept for a data set whose
licence forbids sharing it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.machine import machine_facts
from benchmarks.reports import publish, report_head
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.cli.commands import positive_int
from hindsight_tools.encoders.embedding import Embedder, default_embedder, embed_texts
from hindsight_tools.jsonl import item_from_record, read_records

_EMBED_BATCH = 256


@dataclass
class DataSet:
    name: str
    items: list[dict[str, Any]]
    left_out: int
    characters: float  # mean text length of the items kept
    rates: dict[bool, list[float]] = field(default_factory=lambda: {True: [], False: []})


def load(name: str, path: Path, embedder: Embedder, max_chars: int) -> DataSet:
    """The file's memories that the store takes, each with its embedding."""
    items = [item_from_record(record) for _, record in read_records(path)]
    kept = [item for item in items if len(item["text"]) <= max_chars]
    for start in range(0, len(kept), _EMBED_BATCH):
        batch = kept[start : start + _EMBED_BATCH]
        vectors = embed_texts(embedder, [item["text"] for item in batch])
        for item, vector in zip(batch, vectors, strict=True):
            item["embedding"] = vector.tolist()
    mean = statistics.fmean(len(item["text"]) for item in kept) if kept else 0.0
    return DataSet(name, kept, len(items) - len(kept), mean)


def timed_import(
    data: DataSet,
    embedder: Embedder,
    batch: int,
    defer: bool,
    database_url: str | None,
    facts: dict[str, str],
) -> float:
    """Memories/s of one import of ``data`` into a fresh store (a fresh bank of
    ``database_url``'s database when given); ``facts`` about the machine filled in if empty."""
    folder = Path(tempfile.mkdtemp(prefix="hti-", dir="/tmp"))
    bank = f"import-{data.name}-{time.monotonic_ns()}"
    try:
        settings = Settings(data_dir=folder, database_url=database_url)
        with MemoryEngine(settings=settings, embedder=embedder) as engine:
            if not facts:
                facts.update(machine_facts(engine.database_url))
            started = time.perf_counter()
            result = engine.import_memories(bank, data.items, batch_size=batch, defer_indexes=defer)
            seconds = time.perf_counter() - started
            if database_url is not None:
                engine.delete_bank(bank)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if result.imported != len(data.items):
        raise RuntimeError(f"{data.name}: imported {result.imported} of {len(data.items)}")
    return len(data.items) / seconds


def report(sets: Sequence[DataSet], runs: int, batch: int, facts: dict[str, str]) -> str:
    command = (
        "`.venv/bin/python -m benchmarks.import_data_bench "
        + " ".join(f"{d.name}=FILE" for d in sets)
        + f" --runs {runs} --batch {batch}`"
    )
    lines = [
        *report_head(
            "Bulk import throughput on real data", "benchmarks/import_data_bench.py", command, facts
        ),
        "Memories/s with their vectors given, one bank in a fresh store: the median of the "
        "runs, then each run in order (separated by /).",
        "",
        "| data | memories | mean characters | left out (too long) | search indexes set aside "
        "| runs | search indexes kept | runs |",
        "|---|---:|---:|---:|---:|---|---:|---|",
    ]
    for d in sets:
        aside, kept = d.rates[True], d.rates[False]
        lines.append(
            f"| {d.name} | {len(d.items):,} | {d.characters:,.0f} | {d.left_out} | "
            f"**{statistics.median(aside):,.0f}** | {' / '.join(f'{r:,.0f}' for r in aside)} | "
            f"**{statistics.median(kept):,.0f}** | {' / '.join(f'{r:,.0f}' for r in kept)} |"
        )
    return "\n".join([*lines, ""])


def main(argv: Sequence[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="+", metavar="NAME=FILE")
    parser.add_argument("--runs", type=positive_int, default=3)
    parser.add_argument("--batch", type=positive_int, default=1000)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--database-url", help="a database to import into instead of throw-away embedded ones"
    )
    args = parser.parse_args(argv)
    named = [spec.split("=", 1) for spec in args.data]
    if any(len(pair) != 2 or not pair[0] for pair in named):
        parser.error("each data set is NAME=FILE")

    settings = Settings()
    embedder = default_embedder(settings.embeddings_model, settings.embeddings_batch_size)
    sets = [
        load(name, Path(path), embedder, settings.retain_max_text_chars) for name, path in named
    ]
    facts: dict[str, str] = {}
    for _ in range(args.runs):
        for data in sets:
            for defer in (True, False):
                rate = timed_import(data, embedder, args.batch, defer, args.database_url, facts)
                data.rates[defer].append(rate)
    return publish(report(sets, args.runs, args.batch, facts), args.out)


if __name__ == "__main__":
    main()

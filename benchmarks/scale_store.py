"""The scale benchmark's stores, built the way a database restore builds one: rows first,
then each index once over all of them, then the links, then the links' indexes, then the
planner's statistics.

The rows go through the engine's own import (`import_memories`, vectors given), with the
vector indexes and the links set aside. Inserting a million rows one at a time into the
HNSW graphs and fifty million link rows into their indexes is the import's own path,
measured at 110–250 memories/s by `benchmarks/import_bench.py`; a million-memory store
would take hours that way. Built in passes, the store ends with the
same schema (every index and constraint is put back from the catalogue's own definition),
the same rows, and links made by the engine's own statement
(:func:`~hindsight_tools.retain.links.link_plan`) with the engine's settings. What differs:
a memory retained over time links to the memories before it, while here every
memory links to its nearest neighbours among all of its bank's memories, the same rule run
once at the end. Late-interaction vectors, and each memory's reading in context, are
drawn from a pool of real ones (:func:`token_vectors` says why and what that means). A
bank's rows lie together on disk, in the order they were loaded, with no dead rows and
graphs built in one pass; a store that grew by many interleaved retains scatters each bank
over the table, so these stores are a best case for reading one bank's rows (most of all
for the many small banks).
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from tqdm import tqdm

from benchmarks.recall_bench_data import Memory
from benchmarks.recall_bench_vectors import CompositeEmbedder
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.retain.links import link_plan
from hindsight_tools.runtime.plan import run_plan
from hindsight_tools.store.deferred_indexes import VECTOR_INDEXES as STORE_VECTOR_INDEXES

VECTOR_INDEXES = tuple(STORE_VECTOR_INDEXES)
LINK_INDEXES = ("memory_links_to",)
IMPORT_BATCH = 2000
LINK_BATCH = 500
WORKERS = 2  # one per core: PostgreSQL does the work, these threads only wait on it
# An HNSW build whose graph fits in maintenance_work_mem runs several times faster than one
# that spills; a million 384-dimension vectors need about 2 GB.
BUILD_SETTINGS = ("SET maintenance_work_mem = '4GB'", "SET max_parallel_maintenance_workers = 1")
MARKER = "scale-store.json"
TOKEN_POOL = 1000

_INDEX_DEFINITIONS = """
SELECT indexname, indexdef FROM pg_indexes
WHERE schemaname = current_schema() AND indexname = ANY(%s) ORDER BY indexname
"""


@dataclass(frozen=True)
class SetAside:
    """Indexes dropped for a load, with the catalogue's definitions."""

    indexes: tuple[str, ...]  # CREATE INDEX statements


@dataclass
class BuildTimes:
    """Seconds of each pass of a build (for a reused store, of the build that made it)."""

    rows: float = 0.0
    vector_indexes: float = 0.0
    links: float = 0.0
    token_vectors: float = 0.0
    link_indexes: float = 0.0
    vacuum: float = 0.0
    reused: bool = False

    @property
    def total(self) -> float:
        return (
            self.rows
            + self.vector_indexes
            + self.links
            + self.token_vectors
            + self.link_indexes
            + self.vacuum
        )


def set_aside(conn: psycopg.Connection[Any], indexes: Sequence[str]) -> SetAside:
    definitions = conn.execute(_INDEX_DEFINITIONS, (list(indexes),)).fetchall()
    for name, _ in definitions:
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
    return SetAside(tuple(str(d) for _, d in definitions))


def put_back(conn: psycopg.Connection[Any], aside: SetAside) -> None:
    """Build what :func:`set_aside` dropped, each in one pass over the loaded rows."""
    for setting in BUILD_SETTINGS:
        conn.execute(setting)
    # The definitions come from the catalogue of this very store, not from any input.
    for definition in tqdm(aside.indexes, desc="indexes", unit="index", leave=False):
        conn.execute(sql.SQL(definition))


def _items(
    embedder: CompositeEmbedder, memories: Sequence[Memory], batch: int
) -> Iterator[dict[str, Any]]:
    for start in range(0, len(memories), batch):
        chunk = memories[start : start + batch]
        vectors = embedder.vectors([m.text for m in chunk])
        for memory, vector in zip(chunk, vectors, strict=True):
            yield {**memory.item(), "embedding": vector.tolist()}


def _in_parallel(tasks: Sequence[Callable[[], None]]) -> None:
    """Run ``tasks`` on ``WORKERS`` threads; the first failure cancels the ones not begun."""
    pool = ThreadPoolExecutor(WORKERS)
    try:
        for future in [pool.submit(task) for task in tasks]:
            future.result()
    finally:
        pool.shutdown(cancel_futures=True)


def build_store(
    settings: Settings, embedder: CompositeEmbedder, banks: Mapping[str, Sequence[Memory]]
) -> BuildTimes:
    """Fill an empty store with ``banks``; the store ends as a normal one."""
    total = sum(len(m) for m in banks.values())
    times = BuildTimes()
    # Every text known and every component embedded before the loader threads start: the
    # embedder's tables are not safe to grow from two threads.
    for memories in banks.values():
        for m in memories:
            embedder.register(m.text, m.parts)
    embedder.embed_components()
    loading = settings.with_overrides({"semantic_link_top_k": 0, "temporal_link_max": 0})
    with MemoryEngine(settings=loading, embedder=embedder) as loader:
        with psycopg.connect(loader.database_url, autocommit=True) as conn:
            vectors_aside = set_aside(conn, VECTOR_INDEXES)
            links_aside = set_aside(conn, LINK_INDEXES)

        started = time.perf_counter()
        with tqdm(total=total, desc="rows", unit="memory") as bar:

            def load(bank: str, memories: Sequence[Memory]) -> None:
                batch = min(IMPORT_BATCH, len(memories))
                items = _items(embedder, memories, batch)
                loader.import_memories(bank, items, batch_size=batch, progress=bar.update)

            _in_parallel([functools.partial(load, b, m) for b, m in banks.items()])
        times.rows = time.perf_counter() - started

        started = time.perf_counter()
        with psycopg.connect(loader.database_url, autocommit=True) as conn:
            put_back(conn, vectors_aside)
            # Without statistics of the loaded rows the planner takes the link statement's
            # neighbour search for one over an empty table and sorts the whole bank instead
            # of walking the HNSW index.
            conn.execute("ANALYZE")
        times.vector_indexes = time.perf_counter() - started

        # The same engine links them: a new one would first build the incoming-links index
        # set aside above, as an engine opening a store without it does.
        started = time.perf_counter()
        with tqdm(total=total, desc="links", unit="memory") as bar:

            def link(bank: str, ids: Sequence[str]) -> None:
                with loader._pool.connection() as conn:
                    run_plan(conn, link_plan(bank, ids, settings))
                bar.update(len(ids))

            tasks = [
                functools.partial(link, bank, [m.id for m in memories[at : at + LINK_BATCH]])
                for bank, memories in banks.items()
                for at in range(0, len(memories), LINK_BATCH)
            ]
            _in_parallel(tasks)
        times.links = time.perf_counter() - started

        started = time.perf_counter()
        late = loader._core.late_interaction
        if late is not None:
            with psycopg.connect(loader.database_url, autocommit=True) as conn:
                token_vectors(conn, late.encode_documents, banks)
        times.token_vectors = time.perf_counter() - started

        with psycopg.connect(loader.database_url, autocommit=True) as conn:
            started = time.perf_counter()
            put_back(conn, links_aside)
            times.link_indexes = time.perf_counter() - started
            started = time.perf_counter()
            # What autovacuum does to a store in use: statistics for the planner, and the
            # visibility map that lets the keyword arm read its postings from the index alone.
            conn.execute("VACUUM (ANALYZE)")
            times.vacuum = time.perf_counter() - started
    return times


_POOL = "CREATE TEMP TABLE token_pool (n integer PRIMARY KEY, vectors bytea NOT NULL)"
# Each memory gets the vectors of one pooled text, picked by a digest of its id, and as its
# reading in context those of another (a third digest); a big bank goes in parts (another
# digest) so that no one statement writes gigabytes. The stores have no document order, so
# each reading names its own memory as the one it was read after: the index of readings by
# that memory is as full as in a store of conversations.
_TOKEN_VECTORS = """
INSERT INTO memory_token_vectors (bank_id, id, vectors, context_vectors, context_of)
SELECT u.bank_id, u.id, p.vectors, c.vectors, u.id
FROM memory_units u
JOIN token_pool p ON p.n = abs(hashtextextended(u.id, 0)) %% %(pool)s
JOIN token_pool c ON c.n = abs(hashtextextended(u.id, 2)) %% %(pool)s
WHERE u.bank_id = %(bank)s AND abs(hashtextextended(u.id, 1)) %% %(parts)s = %(part)s
"""
TOKEN_PART = 20_000  # memories a statement, about 300 MB of vectors


def token_vectors(
    conn: psycopg.Connection[Any],
    encode: Callable[[Sequence[str]], list[bytes]],
    banks: Mapping[str, Sequence[Memory]],
) -> None:
    """Late-interaction vectors for every memory, and a reading in context, as a memory of
    a conversation has one (:mod:`hindsight_tools.retain.reading_context`), from a pool of
    ``TOKEN_POOL`` real ones.

    The model encodes about 80 memories/s here, so a million would take hours; each memory
    gets instead the real vectors of one of its store's memories. Stored sizes and the work
    of a recall (fetching and scoring both readings) are as in a store whose vectors were
    computed; the scores themselves mean nothing, which a latency benchmark does not read."""
    everything = [m.text for memories in banks.values() for m in memories]
    step = max(1, len(everything) // TOKEN_POOL)
    texts = everything[::step][:TOKEN_POOL]
    conn.execute(_POOL)
    with conn.cursor() as cursor, cursor.copy("COPY token_pool (n, vectors) FROM STDIN") as copy:
        for n, blob in enumerate(encode(texts)):
            copy.write_row((n, blob))
    steps = [
        (bank, part, parts)
        for bank, memories in banks.items()
        for parts in [-(-len(memories) // TOKEN_PART)]
        for part in range(parts)
    ]
    for bank, part, parts in tqdm(steps, desc="token vectors", leave=False):
        params = {"bank": bank, "pool": len(texts), "part": part, "parts": parts}
        conn.execute(_TOKEN_VECTORS, params)
    conn.execute("DROP TABLE token_pool")


def store_shape(banks: Mapping[str, Sequence[Memory]], seed: int) -> dict[str, Any]:
    return {"seed": seed, "banks": len(banks), "memories": sum(len(m) for m in banks.values())}


def built_store(
    data_dir: Path,
    settings: Settings,
    embedder: CompositeEmbedder,
    banks: Mapping[str, Sequence[Memory]],
    seed: int,
    reuse: bool,
) -> BuildTimes:
    """The store of ``banks`` in ``data_dir``: kept when ``reuse`` and it was built for the
    same banks and seed, otherwise built afresh in an empty folder."""
    marker = data_dir / MARKER
    shape = store_shape(banks, seed)
    if reuse and marker.exists():
        kept = json.loads(marker.read_text())
        if kept["shape"] == shape:  # the times of the run that built it
            return BuildTimes(**{**kept["times"], "reused": True})
    if data_dir.exists() and any(data_dir.iterdir()):
        raise SystemExit(f"{data_dir} is not empty and holds no store of this shape")
    data_dir.mkdir(parents=True, exist_ok=True)
    times = build_store(settings, embedder, banks)
    marker.write_text(json.dumps({"shape": shape, "times": asdict(times)}) + "\n")
    return times

"""The indexes a large import may set aside and build after its rows are in: those that
only searches and forgetting read, never an import's own writes. The HNSW indexes of
``memory_units``, the index of incoming links, the full-text index of the ``native``
keyword search and the index that finds a memory's keyword postings to forget them.

Inserting a memory into the two HNSW graphs it belongs to (the one of every memory and the
one of its fact type) costs about 2 ms on two cores, each of its ~55 links a random
insertion into the index of incoming links, and a long memory's ~90 keyword postings as
many insertions into the postings' second index and its lexemes into the full-text index;
building a graph over rows already there costs a fraction of that per memory, and a btree
or GIN index is built by one sort, as a database restore builds its indexes after the data.
While they are set aside, searches of every bank in the store go without them (correct,
and slow in a large store), so an import sets them aside only when asked. The primary keys
stay: the import's writes check them, and the keyword arm reads its postings by theirs.

The definitions are those of the migrations (``0001_core.sql``, ``0002``, ``0004``); a test
compares the indexes built here with the ones a fresh migration makes. Whatever drops them, the
next engine to open the store builds any that are missing, so an import cut short leaves
no store without them for longer than it takes to open it again.
"""

from __future__ import annotations

from psycopg import sql

from hindsight_tools.runtime.plan import Plan, Statement
from hindsight_tools.runtime.program import Parallel, ParallelResult, Program

_HNSW = "memory_units USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
# name -> what follows "CREATE INDEX name ON"; fixed text, never input
DEFERRED_INDEXES: dict[str, str] = {
    "memory_units_embedding_hnsw": _HNSW,
    "memory_units_embedding_world": f"{_HNSW} WHERE fact_type = 'world'",
    "memory_units_embedding_experience": f"{_HNSW} WHERE fact_type = 'experience'",
    "memory_units_embedding_observation": f"{_HNSW} WHERE fact_type = 'observation'",
    "memory_links_to": "memory_links (bank_id, to_unit_id, link_type, weight DESC)",
    "memory_units_search": "memory_units USING gin (search_vector)",
    "memory_terms_unit": "memory_terms (bank_id, unit_id)",
}
VECTOR_INDEXES = tuple(name for name in DEFERRED_INDEXES if "USING hnsw" in DEFERRED_INDEXES[name])
# Built alone in one lane: the largest, as many rows as the other HNSW graphs together.
_WHOLE_GRAPH = "memory_units_embedding_hnsw"
_PRESENT = """
SELECT indexname FROM pg_indexes
WHERE schemaname = current_schema() AND indexname = ANY(%(names)s)
"""


def missing_indexes_plan() -> Plan[list[str]]:
    """The deferrable indexes the store lacks, in their fixed order."""
    rows = yield Statement(_PRESENT, {"names": list(DEFERRED_INDEXES)})
    present = {str(row[0]) for row in rows}
    return [name for name in DEFERRED_INDEXES if name not in present]


def drop_indexes_plan() -> Plan[None]:
    for name in DEFERRED_INDEXES:
        yield Statement(
            sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)), None, "none"
        )


def build_indexes_plan(names: list[str], memory: str) -> Plan[None]:
    """Build the indexes ``names`` (of :data:`DEFERRED_INDEXES`) over the rows there, one
    after another, with ``memory`` of maintenance_work_mem, in which a graph is built
    without going to disk while it fits.

    Without parallel workers: pgvector's parallel build keeps the graph in dynamic shared
    memory, which a server in a container with a small /dev/shm can't allocate, and on
    two cores a worker saved a tenth of the time (2.7 s against 2.5 s over 10,000
    memories, timed by hand). Two builds at once, each on its own connection, use both
    cores without it (:func:`build_missing_indexes`)."""
    yield Statement(
        "SELECT set_config('maintenance_work_mem', %(memory)s, true)", {"memory": memory}, "none"
    )
    yield Statement("SET LOCAL max_parallel_maintenance_workers = 0", None, "none")
    for name in names:
        statement = sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {}").format(
            sql.Identifier(name), sql.SQL(DEFERRED_INDEXES[name])
        )
        yield Statement(statement, None, "none")


def build_lanes(missing: list[str]) -> list[list[str]]:
    """``missing`` split into the lists to build at once: the HNSW graph of every memory
    alone and the rest in the other; without that graph, the rest alternate."""
    rest = [name for name in missing if name != _WHOLE_GRAPH]
    lanes = [[_WHOLE_GRAPH], rest] if _WHOLE_GRAPH in missing else [rest[0::2], rest[1::2]]
    return [lane for lane in lanes if lane]


def build_missing_indexes(memory: str, connections: int = 2) -> Program[list[str]]:
    """Build the missing deferrable indexes in two lanes at once, each on its own
    connection and in its own transaction (in one, when the pool has only one
    ``connections``); the ones built. A server builds an index on one core, so the second
    lane uses the other one; each lane takes up to ``memory``."""
    found: ParallelResult = yield Parallel({"missing": missing_indexes_plan()})
    missing: list[str] = found["missing"][0]
    lanes = build_lanes(missing) if connections > 1 else [missing] if missing else []
    if lanes:
        yield Parallel(
            {f"lane {i}": build_indexes_plan(lane, memory) for i, lane in enumerate(lanes)}
        )
    return missing

"""The HNSW indexes of ``memory_units``, which a large import may set aside and build after
its rows are in.

Inserting a memory into the two HNSW graphs it belongs to (the one of every memory and the
one of its fact type) costs about 2 ms on two cores; building a graph over rows already
there costs a fraction of that per memory, as a database restore builds its indexes after
the data. While the graphs are set aside, searches of every bank in the store go without
them (correct, and slow in a large store), so an import sets them aside only when asked.

The definitions are those of the migrations (``0001_core.sql``, ``0004``); a test compares
the indexes built here with the ones a fresh migration makes. Whatever drops them, the
next engine to open the store builds any that are missing, so an import cut short leaves
no store without its graphs for longer than it takes to open it again.
"""

from __future__ import annotations

from psycopg import sql

from hindsight_tools.runtime.plan import Plan, Statement
from hindsight_tools.runtime.program import Parallel, ParallelResult, Program

_HNSW = "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
# name -> the rows it covers (a partial index's predicate)
VECTOR_INDEXES: dict[str, str] = {
    "memory_units_embedding_hnsw": "",
    "memory_units_embedding_world": "WHERE fact_type = 'world'",
    "memory_units_embedding_experience": "WHERE fact_type = 'experience'",
    "memory_units_embedding_observation": "WHERE fact_type = 'observation'",
}
_PRESENT = """
SELECT indexname FROM pg_indexes
WHERE schemaname = current_schema() AND tablename = 'memory_units' AND indexname = ANY(%(names)s)
"""


def missing_vector_indexes_plan() -> Plan[list[str]]:
    """The vector indexes the store lacks, in their fixed order."""
    rows = yield Statement(_PRESENT, {"names": list(VECTOR_INDEXES)})
    present = {str(row[0]) for row in rows}
    return [name for name in VECTOR_INDEXES if name not in present]


def drop_vector_indexes_plan() -> Plan[None]:
    for name in VECTOR_INDEXES:
        yield Statement(
            sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)), None, "none"
        )


def build_vector_index_plan(name: str, memory: str) -> Plan[None]:
    """Build the vector index ``name`` (one of :data:`VECTOR_INDEXES`) over the rows there,
    with ``memory`` of maintenance_work_mem, in which the graph is built without going to
    disk while it fits.

    Without parallel workers: pgvector's parallel build keeps the graph in dynamic shared
    memory, which a server in a container with a small /dev/shm can't allocate, and on
    two cores a worker saved a tenth of the time (2.7 s against 2.5 s over 10,000
    memories, timed by hand)."""
    yield Statement(
        "SELECT set_config('maintenance_work_mem', %(memory)s, true)", {"memory": memory}, "none"
    )
    yield Statement("SET LOCAL max_parallel_maintenance_workers = 0", None, "none")
    statement = sql.SQL("CREATE INDEX IF NOT EXISTS {} ON memory_units {} {}").format(
        sql.Identifier(name), sql.SQL(_HNSW), sql.SQL(VECTOR_INDEXES[name])
    )
    yield Statement(statement, None, "none")


def build_missing_vector_indexes(memory: str) -> Program[list[str]]:
    """Build each missing vector index in a transaction of its own; the ones built."""
    found: ParallelResult = yield Parallel({"missing": missing_vector_indexes_plan()})
    missing: list[str] = found["missing"][0]
    for name in missing:
        yield Parallel({name: build_vector_index_plan(name, memory)})
    return missing

"""How the engine walks the HNSW graphs it shares between banks.

One graph over all memories (and one per fact type) serves every bank; a search filters it
by bank, type or time window. Without an iterative scan pgvector stops after ``ef_search``
candidates and returns however few of them passed the filters; with one it walks on until
``LIMIT`` rows have passed, or until ``hnsw.max_scan_tuples``. Relaxed order may hand rows
back slightly out of distance order, which every caller re-sorts or doesn't depend on.
Both settings are local to the transaction, so nothing outlives it (PgBouncer's
transaction mode allows this).
"""

from __future__ import annotations

from hindsight_tools.runtime.plan import Plan, Statement

# pgvector's own default: a smaller candidate list only loses recall.
MIN_EF_SEARCH = 40


def walk_hnsw(ef_search: int) -> Plan[None]:
    """Set the rest of this transaction's HNSW searches to iterative scans from a candidate
    list of ``ef_search`` (at least ``MIN_EF_SEARCH``)."""
    yield Statement("SET LOCAL hnsw.iterative_scan = relaxed_order", None, "none")
    yield Statement(
        "SELECT set_config('hnsw.ef_search', %(ef)s, true)",
        {"ef": str(max(ef_search, MIN_EF_SEARCH))},
        "none",
    )

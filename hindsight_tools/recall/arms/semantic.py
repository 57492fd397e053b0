"""Semantic arm: cosine similarity to the query, per fact type (docs/design.md, The four arms)."""

from __future__ import annotations

from typing import Any

from psycopg import sql

from hindsight_tools.models import FactType
from hindsight_tools.recall.arms.filters import Scope, scope_condition
from hindsight_tools.runtime.plan import Plan, Statement
from hindsight_tools.store.hnsw import walk_hnsw

# Each fact type gets its own top-k, so a bank full of one type can't crowd out the others.
# One branch per type, with the type as a constant: that is what lets the planner use the
# type's partial HNSW index (migration 0004), whose graph holds only that type, instead of
# walking the global one and discarding the other types' rows (3-4x the visited tuples).
_BRANCH = """
(SELECT m.id, 1 - (m.embedding <=> %(query_vector)s) AS similarity
 FROM memory_units m
 WHERE m.bank_id = %(bank)s AND m.fact_type = {fact_type} AND {scope}
 ORDER BY m.embedding <=> %(query_vector)s
 LIMIT %(limit)s)"""
_QUERY = """
SELECT h.id, h.similarity FROM ({branches}) h
WHERE h.similarity >= %(min_similarity)s
"""


def semantic_plan(
    bank_id: str,
    query_vector: Any,
    types: tuple[FactType, ...],
    scope: Scope,
    limit: int,
    min_similarity: float,
) -> Plan[list[tuple[str, float]]]:
    yield from walk_hnsw(limit)
    scope_sql, scope_params = scope_condition("m", scope)
    # fact types are validated members of FACT_TYPES, and quoted as literals all the same
    branches = sql.SQL(" UNION ALL ").join(
        sql.SQL(_BRANCH).format(fact_type=sql.Literal(t), scope=scope_sql) for t in types
    )
    query = sql.SQL(_QUERY).format(branches=branches)
    rows = yield Statement(
        query,
        {
            "bank": bank_id,
            "query_vector": query_vector,
            "limit": limit,
            **scope_params,
            "min_similarity": min_similarity,
        },
    )
    return [(str(r[0]), float(r[1])) for r in rows]

"""Graph arm: link expansion from the query's best semantic hits (docs/design.md, The four arms).

Seeds are the top ``GRAPH_SEED_LIMIT`` semantic hits with similarity ≥ 0.3 — plus, beyond
the reference, the bank's entities that the query names (matched with pg_trgm, so "Mel"
finds "Mel" and "Melanie's" finds "Melanie"). Each candidate sums three signals:

* entity: ``tanh(0.5 · shared)`` over the seed entities it mentions, each entity expanded to
  at most ``per_entity_limit`` memories so a hub like "user" can't explode the join;
* semantic: the strongest precomputed semantic link to a seed, either direction;
* causal: the strongest causal link from a seed.

Additive on purpose: a memory linked only causally still scores. Seeds stay in the result:
on the LoCoMo dev set, leaving them out (as the reference does) cut fused recall@10 from
0.509 to 0.458, because the arm's top ranks then go to memories that merely share a
speaker's name. Ties are broken by similarity to the query. The whole query runs under a
time limit; past it the entity signal is dropped and the cheaper link signals are returned.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from psycopg import sql

from hindsight_tools.models import FACT_TYPES, FactType
from hindsight_tools.recall.arms.filters import Scope, scope_condition
from hindsight_tools.runtime.plan import SET_STATEMENT_TIMEOUT, Cancelled, Plan, Statement

_logger = logging.getLogger(__name__)
GRAPH_SEED_LIMIT = 20
ENTITY_MATCH_SIMILARITY = 0.5
_CAUSAL = "('causes', 'caused_by', 'enables', 'prevents')"


@dataclass(frozen=True)
class GraphQuery:
    bank_id: str
    query_vector: Any
    query_entities: tuple[str, ...]
    types: tuple[FactType, ...]
    scope: Scope
    limit: int
    min_similarity: float
    per_entity_limit: int
    timeout_seconds: float
    entity_weighting: Literal["count", "idf"] = "count"


_SEEDS = """
seeds AS (
    SELECT s.id FROM (
        SELECT m.id, 1 - (m.embedding <=> %(query_vector)s) AS similarity
        FROM memory_units m WHERE m.bank_id = %(bank)s
        ORDER BY m.embedding <=> %(query_vector)s
        LIMIT %(seed_limit)s
    ) s WHERE s.similarity >= %(min_similarity)s
)"""

# Each seed entity carries a weight: 1 for plain counting (the reference's way), or its
# inverse document frequency in the bank (``idf``), so an entity in every memory (a speaker, "user")
# adds almost nothing while a rare name counts fully.
_ENTITY_SIGNAL = """,
seed_entity_ids AS (
    SELECT ue.entity_id AS id FROM unit_entities ue JOIN seeds s ON ue.unit_id = s.id
    WHERE ue.bank_id = %(bank)s
    UNION
    SELECT e.id FROM entities e, unnest(%(query_entities)s::text[]) AS q(name)
    WHERE e.bank_id = %(bank)s
      AND similarity(e.canonical_name, q.name) >= %(entity_similarity)s
),
seed_entities AS (
    SELECT e.id AS entity_id,
           CASE WHEN %(idf)s
                THEN ln(1 + b.doc_count::float8 / greatest(e.mention_count, 1))
                     / ln(1 + greatest(b.doc_count, 1))
                ELSE 1.0 END AS weight
    FROM seed_entity_ids i
    JOIN entities e ON e.bank_id = %(bank)s AND e.id = i.id
    JOIN banks b ON b.bank_id = %(bank)s
),
entity_signal AS (
    SELECT x.unit_id, tanh(0.5 * sum(se.weight)) AS score
    FROM seed_entities se
    CROSS JOIN LATERAL (
        SELECT ue.unit_id FROM unit_entities ue
        WHERE ue.bank_id = %(bank)s AND ue.entity_id = se.entity_id
        ORDER BY ue.unit_id
        LIMIT %(per_entity_limit)s
    ) x
    GROUP BY x.unit_id
)"""

_LINK_SIGNALS = """,
semantic_signal AS (
    SELECT other AS unit_id, max(weight) AS score FROM (
        SELECT l.to_unit_id AS other, l.weight FROM memory_links l JOIN seeds s
            ON l.from_unit_id = s.id
        WHERE l.bank_id = %(bank)s AND l.link_type = 'semantic'
        UNION ALL
        SELECT l.from_unit_id, l.weight FROM memory_links l JOIN seeds s ON l.to_unit_id = s.id
        WHERE l.bank_id = %(bank)s AND l.link_type = 'semantic'
    ) linked GROUP BY other
),
causal_signal AS (
    SELECT l.to_unit_id AS unit_id, max(l.weight) AS score
    FROM memory_links l JOIN seeds s ON l.from_unit_id = s.id
    WHERE l.bank_id = %(bank)s AND l.link_type IN {causal}
    GROUP BY l.to_unit_id
)"""

# Summed before the join: grouping by the embedding as well (for the tie-break) sorted
# thousands of 1.5 kB vectors and spilled to disk. Without a type or tag filter, only the
# candidates scoring at least the ``limit``-th best sum (ties included) can be returned, so
# only those are joined to their memories for the tie-break: at 100k memories the arm
# otherwise fetched ~6,000 memory rows for a 300-row answer. With a filter every candidate
# is joined, since the filter may drop some of the best.
_COMBINE = """,
combined AS (
    SELECT unit_id, sum(score) AS score FROM ({signals}) signal GROUP BY unit_id
),
cutoff AS (
    SELECT CASE WHEN %(unfiltered)s THEN (
        SELECT score FROM combined ORDER BY score DESC OFFSET %(limit)s - 1 LIMIT 1
    ) END AS score
)
SELECT c.unit_id, c.score
FROM combined c
JOIN memory_units m ON m.bank_id = %(bank)s AND m.id = c.unit_id
WHERE c.score >= coalesce((SELECT score FROM cutoff), '-infinity')
  AND m.fact_type = ANY(%(types)s) AND {scope}
ORDER BY c.score DESC, m.embedding <=> %(query_vector)s, c.unit_id
LIMIT %(limit)s
"""


def _query(with_entities: bool, scope: sql.Composable) -> sql.Composed:
    signals = [
        "SELECT unit_id, score FROM semantic_signal",
        "SELECT unit_id, score FROM causal_signal",
    ]
    ctes = _SEEDS + (_ENTITY_SIGNAL if with_entities else "") + _LINK_SIGNALS
    if with_entities:
        signals.insert(0, "SELECT unit_id, score FROM entity_signal")
    text = "WITH " + ctes + _COMBINE
    return sql.SQL(text).format(
        causal=sql.SQL(_CAUSAL),
        signals=sql.SQL(" UNION ALL ".join(signals)),
        scope=scope,
    )


def graph_plan(query: GraphQuery) -> Plan[list[tuple[str, float]]]:
    params = {
        "bank": query.bank_id,
        "query_vector": query.query_vector,
        "query_entities": list(query.query_entities),
        "seed_limit": GRAPH_SEED_LIMIT,
        "min_similarity": query.min_similarity,
        "entity_similarity": ENTITY_MATCH_SIMILARITY,
        "per_entity_limit": query.per_entity_limit,
        "idf": query.entity_weighting == "idf",
        "types": list(query.types),
        "limit": query.limit,
    }
    scope, scope_params = scope_condition("m", query.scope)
    params |= scope_params
    params["unfiltered"] = set(query.types) == set(FACT_TYPES) and not query.scope.filters_rows
    timeout_ms = max(int(query.timeout_seconds * 1000), 1)
    # The recall's own statement limit (if any) comes back for the fallback query.
    ((enclosing,),) = yield Statement("SELECT current_setting('statement_timeout')")
    yield Statement(SET_STATEMENT_TIMEOUT, {"ms": str(timeout_ms)}, "none")
    rows = yield Statement(_query(True, scope), params, cancellable=True)
    yield Statement(SET_STATEMENT_TIMEOUT, {"ms": enclosing}, "none")
    if isinstance(rows, Cancelled):
        _logger.warning(
            "graph arm passed its %.3f s limit in bank %r; entity signal dropped",
            query.timeout_seconds,
            query.bank_id,
        )
        rows = yield Statement(_query(False, scope), params)
    return [(str(r[0]), float(r[1])) for r in rows]

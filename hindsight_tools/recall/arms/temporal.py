"""Temporal arm: memories dated inside the query's time window, then along time links
(docs/design.md, The four arms).

Active only when the query names a time (``hindsight_tools.query.time_window``). Direct
hits are the memories whose date range (``occurred_start..occurred_end``, else
``mentioned_at``) overlaps the window, ranked by similarity to the query (≥
``min_similarity``): every one of them when the window holds at most ``exact_window_rows``
memories (or a filter narrows it), else the nearest found by walking the HNSW graph and
keeping those inside the window. From the best ``ENTRY_POINTS`` of them the score spreads
along temporal and causal links, times ``HOP_DECAY`` per hop, for at most ``MAX_HOPS`` hops
and never below ``MIN_SPREAD_SCORE``. A memory both inside the window and reached by the
spread keeps the higher of its two scores. The window ranks, it doesn't filter: the other
arms still return undated or out-of-window memories.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import sql

from hindsight_tools.models import FactType
from hindsight_tools.recall.arms.filters import Scope, memory_span, scope_condition
from hindsight_tools.runtime.plan import Plan, Statement
from hindsight_tools.store.hnsw import walk_hnsw

ENTRY_POINTS = 10
MAX_HOPS = 5
HOP_DECAY = 0.7
MIN_SPREAD_SCORE = 0.2
_SPREAD_LINKS = ("temporal", "causes", "caused_by", "enables", "prevents")


@dataclass(frozen=True)
class TemporalQuery:
    bank_id: str
    query_vector: Any
    start: datetime | None
    end: datetime | None
    types: tuple[FactType, ...]
    scope: Scope
    limit: int
    min_similarity: float
    # Above this many memories in the window, its nearest are found through the HNSW index.
    exact_window_rows: int = 30_000


# A window open on one side (None) is unbounded there; bounds are inclusive.
_DATED, _SPAN = memory_span("m")
_DIRECT = f"""
SELECT m.id, 1 - (m.embedding <=> %(query_vector)s) AS similarity
FROM memory_units m
WHERE m.bank_id = %(bank)s AND {_DATED}
  AND {_SPAN} && tstzrange(%(start)s::timestamptz, %(end)s::timestamptz, '[]')
  AND m.fact_type = ANY(%(types)s) AND {{scope}}
  AND 1 - (m.embedding <=> %(query_vector)s) >= %(min_similarity)s
ORDER BY similarity DESC, m.id
LIMIT %(limit)s
"""
# A wide window in a big bank ("in 2023" over 300,000 memories holds 100,000) is too many
# rows to score one by one (170-225 ms, against 36-65 ms for the walk below). The count
# reads only the (bank_id, fact_type, event_time) btree, and stops at the bound: it says
# which side of the bound the window is, not its size. event_time is a memory's start, so
# a span that began before the window isn't counted; an estimate is all the choice needs.
_WINDOW_ROWS = """
SELECT count(*) FROM (
    SELECT 1 FROM memory_units m
    WHERE m.bank_id = %(bank)s AND m.fact_type = ANY(%(types)s)
      AND m.event_time >= coalesce(%(start)s::timestamptz, '-infinity')
      AND m.event_time <= coalesce(%(end)s::timestamptz, 'infinity')
    LIMIT %(bound)s
) w
"""
# The nearest memories inside the window by walking the HNSW graph in order of distance and
# keeping those in the window; an iterative scan walks on until it has ``limit`` of them,
# or until pgvector's hnsw.max_scan_tuples. The planner guesses a range overlap's
# selectivity (997 rows for a window of 100,000) and would rather sort the window than
# walk the graph: sorts are priced out for this statement, which leaves the vector index
# the one way to its order. Relaxed order may hand rows back slightly out of order; the
# arm sorts them. The similarity floor is applied afterwards, so that a floor nothing
# passes can't keep the walk going, and so that a walk that came up short can be told.
_DIRECT_BY_INDEX = f"""
SELECT m.id, 1 - (m.embedding <=> %(query_vector)s) AS similarity
FROM memory_units m
WHERE m.bank_id = %(bank)s AND {_DATED}
  AND {_SPAN} && tstzrange(%(start)s::timestamptz, %(end)s::timestamptz, '[]')
  AND m.fact_type = ANY(%(types)s)
ORDER BY m.embedding <=> %(query_vector)s
LIMIT %(limit)s
"""
_NO_SORTS = "SET LOCAL enable_sort = off"
_SORTS_BACK = "SET LOCAL enable_sort TO DEFAULT"  # the spread that follows sorts
# Temporal links are stored one way (newer -> older) but mean "close in time" both ways;
# causal links are followed in the direction they were given. Each hop keeps only its best
# ``limit`` nodes: a node outside them scores below ``limit`` nodes of the same hop, and
# its descendants lower still, so none of them could reach the arm's top ``limit``. Without
# the cap a 100k bank spread to 40,000 nodes in three hops (170 ms of a 300-row answer).
_SPREAD = """
WITH frontier AS (
    SELECT * FROM unnest(%(frontier)s::text[], %(scores)s::float8[]) AS f(id, score)
), reached AS (
    SELECT l.to_unit_id AS id, f.score FROM memory_links l JOIN frontier f
        ON l.from_unit_id = f.id
    WHERE l.bank_id = %(bank)s AND l.link_type = ANY(%(links)s)
    UNION ALL
    SELECT l.from_unit_id, f.score FROM memory_links l JOIN frontier f ON l.to_unit_id = f.id
    WHERE l.bank_id = %(bank)s AND l.link_type = 'temporal'
)
SELECT id, max(score) AS score FROM reached
GROUP BY id
ORDER BY score DESC, id
LIMIT %(limit)s
"""
_ALLOWED = """
SELECT m.id FROM memory_units m
WHERE m.bank_id = %(bank)s AND m.id = ANY(%(ids)s) AND m.fact_type = ANY(%(types)s)
  AND {scope}
"""


def temporal_plan(query: TemporalQuery) -> Plan[list[tuple[str, float]]]:
    if query.start is not None and query.end is not None and query.start > query.end:
        return []  # an empty window; tstzrange would raise, failing the whole recall
    scope, scope_params = scope_condition("m", query.scope)
    base = {"bank": query.bank_id, "types": list(query.types), **scope_params}
    scores = yield from _direct(query, scope, base)
    entry = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))[:ENTRY_POINTS]
    spread: dict[str, float] = {}
    frontier = dict(entry)
    floor = _spread_floor(list(scores.values()), query.limit)
    for _ in range(MAX_HOPS):
        frontier = {k: v * HOP_DECAY for k, v in frontier.items() if v * HOP_DECAY >= floor}
        if not frontier:
            break
        links = yield Statement(
            _SPREAD,
            {
                "bank": query.bank_id,
                "frontier": list(frontier),
                "scores": list(frontier.values()),
                "links": list(_SPREAD_LINKS),
                "limit": query.limit,
            },
        )
        reached: dict[str, float] = {}
        for target, score in links:
            target, score = str(target), float(score)
            if score > max(scores.get(target, 0.0), spread.get(target, 0.0)):
                reached[target] = score
        spread.update(reached)
        frontier = reached
    if spread:
        allowed = yield Statement(
            sql.SQL(_ALLOWED).format(scope=scope), {**base, "ids": list(spread)}
        )
        for (unit_id,) in allowed:
            unit_id = str(unit_id)
            scores[unit_id] = max(scores.get(unit_id, 0.0), spread[unit_id])
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
    return ranked[: query.limit]


def _direct(
    query: TemporalQuery, scope: sql.Composable, base: dict[str, Any]
) -> Plan[dict[str, float]]:
    """The window's memories nearest the query: all of the window scored when it is
    small, the HNSW graph walked when it is wide."""
    params = {
        **base,
        "query_vector": query.query_vector,
        "start": query.start,
        "end": query.end,
        "limit": query.limit,
        "min_similarity": query.min_similarity,
    }
    exact = Statement(sql.SQL(_DIRECT).format(scope=scope), params)
    # A filter (tags, metadata, dates) can keep all but a few of a wide window's memories,
    # and the walk would give up before finding them: filtered windows are scored.
    if query.scope.filters_rows:
        return _similarities((yield exact))
    bound = query.exact_window_rows + 1
    counted = yield Statement(_WINDOW_ROWS, {**params, "bound": bound})
    if int(counted[0][0]) < bound:
        return _similarities((yield exact))
    yield from walk_hnsw(query.limit)
    yield Statement(_NO_SORTS, None, "none")
    walked = yield Statement(_DIRECT_BY_INDEX, params)
    yield Statement(_SORTS_BACK, None, "none")
    if len(walked) < query.limit:
        # The walk stopped short of the budget (its scan limit, in a table where the bank
        # or the window is a small share): the window is scored after all.
        return _similarities((yield exact))
    return {
        id_: similarity
        for id_, similarity in _similarities(walked).items()
        if similarity >= query.min_similarity
    }


def _similarities(rows: list[Any]) -> dict[str, float]:
    return {str(r[0]): float(r[1]) for r in rows}


def _spread_floor(direct: list[float], limit: int) -> float:
    """The lowest score a spread node can have and still matter.

    Spread scores only decay hop by hop. When the window alone filled the arm (``limit``
    direct hits, which already passed the type and tag filters), a node scoring below the
    weakest of them can't enter the arm's top ``limit``, and neither can any node it leads
    to: the spread stops there instead of walking on. On a 100k bank that saved the later
    hops of every wide window. Ties stay in (the id breaks them).
    """
    if len(direct) >= limit > 0:
        return max(MIN_SPREAD_SCORE, min(direct))
    return MIN_SPREAD_SCORE

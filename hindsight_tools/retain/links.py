"""The links of memories just written (docs/design.md, Retain): semantic and temporal
ones found in SQL as the settings ask for them, the ones an import found in its own process
written as they are, and the causal ones an item brings. All statements are parameterised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from psycopg import sql

from hindsight_tools.errors import FieldProblem, InvalidRequestError
from hindsight_tools.retain.neighbours import SemanticLinks
from hindsight_tools.retain.timeline import TemporalLinks
from hindsight_tools.retain.units import PreparedItem
from hindsight_tools.runtime.plan import Plan, Statement
from hindsight_tools.settings import Settings
from hindsight_tools.store.hnsw import walk_hnsw

_BANK_SIZE = "SELECT count(*) FROM memory_units WHERE bank_id = %(bank)s"
# An import's links found in its own process come from memories it has just written, so
# nothing conflicts with them once any links a hand-made delete left behind are gone; COPY
# takes them without the per-row conflict check of an upsert.
_DROP_OUTGOING_LINKS = """
DELETE FROM memory_links WHERE bank_id = %(bank)s AND from_unit_id = ANY(%(ids)s)
"""
_COPY_LINKS = """
COPY memory_links (bank_id, from_unit_id, to_unit_id, link_type, weight)
FROM STDIN (FORMAT BINARY)
"""
_LINK_TYPES = ("text", "text", "text", "text", "float4")
# {order} is one of the two _NEIGHBOUR_ORDER entries, never user input.
_SEMANTIC_LINKS = """
INSERT INTO memory_links (bank_id, from_unit_id, to_unit_id, link_type, weight)
SELECT %(bank)s, u.id, n.id, 'semantic', least(n.similarity, 1.0)
FROM memory_units u
CROSS JOIN LATERAL (
    SELECT m.id, 1 - (m.embedding <=> u.embedding) AS similarity
    FROM memory_units m
    WHERE m.bank_id = %(bank)s AND m.id <> u.id
    ORDER BY {order}
    LIMIT %(top_k)s
) n
WHERE u.bank_id = %(bank)s AND u.id = ANY(%(ids)s) AND n.similarity >= %(threshold)s
ON CONFLICT (bank_id, from_unit_id, to_unit_id, link_type) DO UPDATE SET weight = EXCLUDED.weight
"""
# Ordering by the distance operator lets the planner walk the HNSW index (approximate);
# ordering by the derived similarity can't use it and compares against every unit of the
# bank (exact), which is the faster of the two until a bank holds a few thousand units.
_NEIGHBOUR_ORDER = {"hnsw": "m.embedding <=> u.embedding", "exact": "similarity DESC"}
# A memory's nearest in time are the nearest before it and the nearest after it: each side
# read in time order along the (bank_id, event_time) btree and stopped at ``max_links``,
# the two merged. Ordering the whole +/- window by distance read every memory in it (about
# 1,800 a memory in a bank of 1,000,000 spread over three years: 20 ms a memory, where
# each side's walk reads its ``max_links``). Same links: on each side, nearer in time is
# earlier in that side's order, and equal times are ordered by id in both. Ids are compared
# byte by byte whatever the database's collation, as an import's own search
# (``retain.timeline``) compares them.
_NEAREST_SIDE = """
(SELECT m.id, abs(extract(epoch FROM m.event_time - u.event_time)) / 3600.0 AS hours
 FROM memory_units m
 WHERE m.bank_id = %(bank)s AND m.id <> u.id AND {side}
 ORDER BY m.event_time {direction}, m.id COLLATE "C"
 LIMIT %(max_links)s)"""
_BEFORE = _NEAREST_SIDE.format(
    side="m.event_time BETWEEN u.event_time - make_interval(secs => %(window_seconds)s)"
    " AND u.event_time",
    direction="DESC",
)
_AFTER = _NEAREST_SIDE.format(
    side="m.event_time > u.event_time"
    " AND m.event_time <= u.event_time + make_interval(secs => %(window_seconds)s)",
    direction="ASC",
)
_TEMPORAL_LINKS = f"""
INSERT INTO memory_links (bank_id, from_unit_id, to_unit_id, link_type, weight)
SELECT %(bank)s, u.id, n.id, 'temporal',
       greatest(0.3, 1 - n.hours / %(window_hours)s)
FROM memory_units u
CROSS JOIN LATERAL (
    SELECT near.id, near.hours FROM ({_BEFORE}
        UNION ALL{_AFTER}
    ) near
    ORDER BY near.hours, near.id COLLATE "C"
    LIMIT %(max_links)s
) n
WHERE u.bank_id = %(bank)s AND u.id = ANY(%(ids)s) AND u.event_time IS NOT NULL
ON CONFLICT (bank_id, from_unit_id, to_unit_id, link_type) DO UPDATE SET weight = EXCLUDED.weight
"""
_MISSING_TARGETS = """
SELECT t FROM unnest(%(targets)s::text[]) AS t
WHERE NOT EXISTS (SELECT 1 FROM memory_units m WHERE m.bank_id = %(bank)s AND m.id = t)
"""
_INSERT_CAUSAL = """
INSERT INTO memory_links (bank_id, from_unit_id, to_unit_id, link_type, weight)
VALUES (%(bank)s, %(from_id)s, %(to_id)s, %(link_type)s, %(weight)s)
ON CONFLICT (bank_id, from_unit_id, to_unit_id, link_type) DO UPDATE SET weight = EXCLUDED.weight
"""


@dataclass(frozen=True)
class FoundLinks:
    """A batch's links found in the importing process, as the rows to COPY (made where
    they were found, so that the write only streams them): its semantic links, and its
    temporal ones unless those are left to SQL; and the bank size they assume before the
    batch."""

    bank_size: int
    rows: list[tuple[str, str, str, str, float]]
    with_temporal: bool

    @classmethod
    def of(
        cls, bank_id: str, semantic: SemanticLinks, temporal: TemporalLinks | None
    ) -> FoundLinks:
        kinds: list[tuple[str, SemanticLinks | TemporalLinks]] = [("semantic", semantic)]
        if temporal is not None:
            kinds.append(("temporal", temporal))
        rows = [
            (bank_id, f, t, kind, w)
            for kind, links in kinds
            for f, t, w in zip(links.from_ids, links.to_ids, links.weights, strict=True)
        ]
        return cls(semantic.bank_size, rows, temporal is not None)


def write_found_links(bank_id: str, ids: Sequence[str], found: FoundLinks) -> Plan[None]:
    yield Statement(_DROP_OUTGOING_LINKS, {"bank": bank_id, "ids": list(ids)}, "none")
    if found.rows:
        yield Statement(_COPY_LINKS, found.rows, "copy", copy_types=_LINK_TYPES)


def link_plan(
    bank_id: str,
    ids: Sequence[str],
    settings: Settings,
    semantic: bool = True,
    temporal: bool = True,
) -> Plan[None]:
    """The semantic and/or temporal links from the memories ``ids`` to their neighbours in
    the bank, found in SQL as the settings ask for them; links already there get the new
    weight."""
    bank = {"bank": bank_id}
    ids = list(ids)
    if semantic and settings.semantic_link_top_k > 0:
        ((bank_size,),) = yield Statement(_BANK_SIZE, bank)
        method = "exact" if bank_size <= settings.semantic_link_exact_max_units else "hnsw"
        if method == "hnsw":
            yield from walk_hnsw(settings.semantic_link_top_k * 2)
        query = sql.SQL(_SEMANTIC_LINKS).format(order=sql.SQL(_NEIGHBOUR_ORDER[method]))
        yield Statement(
            query,
            {
                **bank,
                "ids": ids,
                "top_k": settings.semantic_link_top_k,
                "threshold": settings.semantic_link_threshold,
            },
            "none",
        )
    if temporal and settings.temporal_link_max > 0:
        yield Statement(
            _TEMPORAL_LINKS,
            {
                **bank,
                "ids": ids,
                "window_hours": settings.temporal_link_window_hours,
                "window_seconds": settings.temporal_link_window_hours * 3600,
                "max_links": settings.temporal_link_max,
            },
            "none",
        )


def causal_links_plan(bank_id: str, prepared: Sequence[PreparedItem]) -> Plan[None]:
    links = [
        (p.position, j, p.id, link) for p in prepared for j, link in enumerate(p.item.causal_links)
    ]
    if not links:
        return
    targets = sorted({link.target_id for *_, link in links})
    missing = {
        row[0] for row in (yield Statement(_MISSING_TARGETS, {"bank": bank_id, "targets": targets}))
    }
    if missing:
        raise InvalidRequestError(
            [
                FieldProblem(
                    f"items[{index}].causal_links[{j}].target_id",
                    f"no memory {link.target_id!r} in bank {bank_id!r} or in this call; a "
                    "causal link must point to a retained memory",
                )
                for index, j, _, link in links
                if link.target_id in missing
            ]
        )
    rows = [
        {
            "bank": bank_id,
            "from_id": from_id,
            "to_id": link.target_id,
            "link_type": link.link_type,
            "weight": link.weight,
        }
        for _, _, from_id, link in links
    ]
    yield Statement(_INSERT_CAUSAL, rows, "many")

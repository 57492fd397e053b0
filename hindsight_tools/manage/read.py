"""Reading memories back as stored: by id, and a bank listed page by page.

A listing is in a total order (by id in code point order, whatever the database's
collation; or the most recently written first, ties by id), so the pages of
``limit``/``offset`` cover a bank that doesn't change exactly once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import sql

from hindsight_tools.models import ListOrder, ListRequest, StoredMemory
from hindsight_tools.recall.arms.filters import request_scope, scope_condition
from hindsight_tools.recall.hydrate import ENTITY_NAMES
from hindsight_tools.runtime.plan import Plan, Statement

# in the order of StoredMemory's fields
_COLUMNS = """
SELECT m.id, m.text, m.fact_type, m.context, m.occurred_start, m.occurred_end,
       m.mentioned_at, m.tags, {entities}, m.document_id, m.chunk_id, m.metadata,
       m.proof_count, m.created_at, m.updated_at
FROM memory_units m
"""
_BY_ID = _COLUMNS + "WHERE m.bank_id = %(bank)s AND m.id = ANY(%(ids)s)"
_LISTING = (
    _COLUMNS
    + """WHERE m.bank_id = %(bank)s AND m.fact_type = ANY(%(types)s) AND {scope}
ORDER BY {order}
LIMIT %(limit)s OFFSET %(offset)s"""
)
_ORDERS: dict[ListOrder, str] = {
    "id": 'm.id COLLATE "C"',
    "updated_at": 'm.updated_at DESC, m.id COLLATE "C"',
}
# Counted in SQL: a bank's tags are few next to its memories, so only they travel.
_TAGS = """
SELECT t.tag, count(*) FROM memory_units m CROSS JOIN LATERAL unnest(m.tags) AS t(tag)
WHERE m.bank_id = %(bank)s AND (%(prefix)s::text IS NULL OR starts_with(t.tag, %(prefix)s))
GROUP BY t.tag ORDER BY t.tag COLLATE "C"
"""
_FIELDS = tuple(StoredMemory.model_fields)


def _memory(row: Sequence[Any]) -> StoredMemory:
    return StoredMemory(**dict(zip(_FIELDS, row, strict=True)))


def get_plan(bank_id: str, ids: Sequence[str]) -> Plan[list[StoredMemory]]:
    """The stored memories among ``ids``, in the order asked (unknown ids left out)."""
    if not ids:
        return []
    rows = yield Statement(
        sql.SQL(_BY_ID).format(entities=sql.SQL(ENTITY_NAMES)),
        {"bank": bank_id, "ids": list(dict.fromkeys(ids))},
    )
    found = {str(r[0]): _memory(r) for r in rows}
    return [found[i] for i in dict.fromkeys(ids) if i in found]


def list_plan(bank_id: str, request: ListRequest) -> Plan[list[StoredMemory]]:
    condition, params = scope_condition("m", request_scope(request))
    rows = yield Statement(
        sql.SQL(_LISTING).format(
            entities=sql.SQL(ENTITY_NAMES), scope=condition, order=sql.SQL(_ORDERS[request.order])
        ),
        {
            "bank": bank_id,
            "types": list(request.fact_types()),
            "limit": request.limit,
            "offset": request.offset,
            **params,
        },
    )
    return [_memory(r) for r in rows]


def tags_plan(bank_id: str, prefix: str | None) -> Plan[dict[str, int]]:
    """Every tag of the bank (those starting with ``prefix``), in code point order, with
    how many memories carry it."""
    rows = yield Statement(_TAGS, {"bank": bank_id, "prefix": prefix})
    return {str(tag): int(n) for tag, n in rows}

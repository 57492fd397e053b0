"""The late-interaction vectors of stored memories: finding the memories without them, and
storing them (the backfill; retain writes its own inside its transaction)."""

from __future__ import annotations

from collections.abc import Sequence

from hindsight_tools.runtime.plan import Plan, Statement

# Backfill of late-interaction vectors (see MemoryEngine.backfill_token_vectors). The text
# guard keeps a memory re-retained meanwhile from getting the vectors of its old text, and
# a retain that stored newer vectors first wins the conflict.
_MISSING_TOKEN_VECTORS = """
SELECT m.bank_id, m.id, m.text FROM memory_units m
WHERE (%(bank)s::text IS NULL OR m.bank_id = %(bank)s)
  AND NOT EXISTS (SELECT 1 FROM memory_token_vectors v
                  WHERE v.bank_id = m.bank_id AND v.id = m.id)
ORDER BY m.bank_id, m.id LIMIT %(limit)s
"""
_STORE_TOKEN_VECTORS = """
INSERT INTO memory_token_vectors (bank_id, id, vectors)
SELECT bank_id, id, %(vectors)s FROM memory_units
WHERE bank_id = %(bank)s AND id = %(id)s AND text = %(text)s
ON CONFLICT DO NOTHING
"""


def missing_token_vectors_plan(bank_id: str | None, limit: int) -> Plan[list[tuple[str, str, str]]]:
    """Up to ``limit`` memories stored without late-interaction vectors: (bank, id, text)."""
    rows = yield Statement(_MISSING_TOKEN_VECTORS, {"bank": bank_id, "limit": limit})
    return [(str(b), str(i), str(t)) for b, i, t in rows]


def store_token_vectors_plan(
    rows: Sequence[tuple[str, str, str]], vectors: Sequence[bytes]
) -> Plan[None]:
    params = [
        {"bank": b, "id": i, "text": t, "vectors": v}
        for (b, i, t), v in zip(rows, vectors, strict=True)
    ]
    yield Statement(_STORE_TOKEN_VECTORS, params, "many")

"""The late-interaction vectors of stored memories: finding the memories without them, and
storing them (the backfill; retain writes its own inside its transaction)."""

from __future__ import annotations

from collections.abc import Sequence

from hindsight_tools.runtime.plan import Plan, Statement

# Backfill of late-interaction vectors (see MemoryEngine.backfill_token_vectors). The text
# guard keeps a memory re-retained meanwhile from getting the vectors of its old text, and
# a retain that stored newer vectors first wins the conflict.
_MISSING_TOKEN_VECTORS = """
SELECT m.id, m.text FROM memory_units m
WHERE m.bank_id = %(bank)s
  AND NOT EXISTS (SELECT 1 FROM memory_token_vectors v
                  WHERE v.bank_id = %(bank)s AND v.id = m.id)
ORDER BY m.id LIMIT %(limit)s
"""
# The one statement that reads across banks, by design: a backfill of the whole store
# enumerates its banks, then works in one bank at a time like every other statement.
BANK_IDS = "SELECT bank_id FROM banks ORDER BY bank_id"
_STORE_TOKEN_VECTORS = """
INSERT INTO memory_token_vectors (bank_id, id, vectors)
SELECT bank_id, id, %(vectors)s FROM memory_units
WHERE bank_id = %(bank)s AND id = %(id)s AND text = %(text)s
ON CONFLICT DO NOTHING
"""


def missing_token_vectors_plan(bank_id: str | None, limit: int) -> Plan[list[tuple[str, str, str]]]:
    """Up to ``limit`` memories stored without late-interaction vectors: (bank, id, text),
    from ``bank_id`` or, with None, from the banks in order."""
    if bank_id is None:
        banks = [str(b) for (b,) in (yield Statement(BANK_IDS))]
    else:
        banks = [bank_id]
    found: list[tuple[str, str, str]] = []
    for bank in banks:
        if len(found) >= limit:
            break
        rows = yield Statement(_MISSING_TOKEN_VECTORS, {"bank": bank, "limit": limit - len(found)})
        found += [(bank, str(i), str(t)) for i, t in rows]
    return found


def store_token_vectors_plan(
    rows: Sequence[tuple[str, str, str]], vectors: Sequence[bytes]
) -> Plan[None]:
    params = [
        {"bank": b, "id": i, "text": t, "vectors": v}
        for (b, i, t), v in zip(rows, vectors, strict=True)
    ]
    yield Statement(_STORE_TOKEN_VECTORS, params, "many")

"""Reading memories from JSON Lines: plain ``{"text": …}`` lines, MemoryItem fields, and the
LoCoMo export (``occurred_at``, ``dia_id``, ``speaker``, …; see ``tests/data/mini-locomo``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hindsight_tools.errors import FieldProblem, InvalidRequestError
from hindsight_tools.models import MemoryItem

_ITEM_FIELDS = frozenset(MemoryItem.model_fields)
# Fields of the record that say where it goes rather than what it is.
_ROUTING_FIELDS = frozenset({"bank"})


def item_from_record(record: dict[str, Any]) -> dict[str, Any]:
    """MemoryItem fields pass through; ``occurred_at`` becomes ``occurred_start``; every other
    field joins ``metadata`` (where a record's own ``metadata`` keys win)."""
    item = {k: v for k, v in record.items() if k in _ITEM_FIELDS}
    if "occurred_at" in record and "occurred_start" not in item:
        item["occurred_start"] = record["occurred_at"]
    extra = {
        k: v
        for k, v in record.items()
        if k not in _ITEM_FIELDS and k not in _ROUTING_FIELDS and k != "occurred_at"
    }
    if extra:
        metadata = record.get("metadata")
        item["metadata"] = {**extra, **(metadata if isinstance(metadata, dict) else {})}
    return item


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; a bad line raises naming its number."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidRequestError(
                    [FieldProblem(f"{path}:{number}", f"not valid JSON: {exc.msg}")]
                ) from None
            if not isinstance(record, dict):
                raise InvalidRequestError(
                    [FieldProblem(f"{path}:{number}", "each line must be a JSON object")]
                )
            yield number, record


def read_documents(path: Path) -> dict[str, str]:
    """``document_id -> text`` from a documents file (LoCoMo ``documents.jsonl`` shape)."""
    return {
        str(record["document_id"]): str(record["text"])
        for _, record in read_records(path)
        if "document_id" in record and "text" in record
    }

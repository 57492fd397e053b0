"""The systems `benchmarks/compare.py` runs side by side, behind one small interface.

Every system is handed the same memories (one bank per LoCoMo conversation) and the same
questions, and answers a question with the ``dia_id``s of its best memories, best first.
Dense systems embed with hindsight-tools' own embedder (:mod:`.embeddings`), so every
vector in the comparison comes from the same model, and all database-backed systems share
one embedded PostgreSQL, each in its own schema or tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

DiaIds = list[str | None]


@dataclass(frozen=True)
class Memory:
    """What a peer stores for one memory: its text and the turn it came from."""

    id: str
    text: str
    dia_id: str | None

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Memory:
        metadata = item.get("metadata") or {}
        dia_id = metadata.get("dia_id")
        return cls(
            id=str(item["id"]),
            text=str(item["text"]),
            dia_id=dia_id if isinstance(dia_id, str) else None,
        )


class System(Protocol):
    """One system under test. ``name`` labels its rows in the report."""

    name: str
    # one sentence for the report: how it is set up, so a reader can reproduce it
    description: str

    def retain(self, bank: str, items: Sequence[dict[str, Any]]) -> None:
        """Store ``items`` (``MemoryItem`` dicts as the evaluation loads them) in ``bank``."""
        ...

    def recall(self, bank: str, query: str, k: int, *, query_time: str | None) -> DiaIds:
        """The ``dia_id``s of the top ``k`` memories of ``bank`` for ``query``."""
        ...

    def close(self) -> None: ...

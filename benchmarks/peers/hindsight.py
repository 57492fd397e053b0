"""hindsight-tools itself, through the public engine API, as `hindsight-tools eval` drives it."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import Any

from benchmarks.peers import DiaIds
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.evaluation import EVAL_MAX_TOKENS, RETAIN_BATCH
from hindsight_tools.evaluation.run import within_text_limit


class HindsightSystem:
    """``MemoryEngine`` with the given settings; its banks are ``prefix + bank``, so two
    configurations on one store each retain (and are timed on) their own copy."""

    def __init__(self, name: str, settings: Settings, prefix: str, description: str) -> None:
        self.name = name
        self.description = description
        self._prefix = prefix
        self.engine = MemoryEngine(settings=settings)

    def bank_id(self, bank: str) -> str:
        return self._prefix + bank

    def retain(self, bank: str, items: Sequence[dict[str, Any]]) -> None:
        bank_id = self.bank_id(bank)
        self.engine.delete_bank(bank_id)
        # as `hindsight-tools eval` does: a message longer than the store takes (BEAM has two)
        # is kept as its first characters, so its id can still be found
        limit = self.engine.settings.retain_max_text_chars
        batches = iter([within_text_limit(item, limit) for item in items])
        while batch := list(islice(batches, RETAIN_BATCH)):
            self.engine.retain(bank_id, batch)

    def recall(self, bank: str, query: str, k: int, *, query_time: str | None) -> DiaIds:
        result = self.engine.recall(
            self.bank_id(bank),
            query,
            budget="mid",
            max_tokens=EVAL_MAX_TOKENS,
            query_timestamp=query_time,
        )
        return [
            dia_id if isinstance(dia_id := memory.metadata.get("dia_id"), str) else None
            for memory in result.memories[:k]
        ]

    def close(self) -> None:
        self.engine.close()

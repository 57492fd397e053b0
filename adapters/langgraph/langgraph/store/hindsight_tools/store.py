"""``HindsightStore``: a LangGraph ``BaseStore`` on a hindsight-tools memory bank."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langgraph.store.base import BaseStore, IndexConfig, Op, Result
from langgraph.store.hindsight_tools.ops import BatchProgram, Budget, StoreConfig, run_batch

from hindsight_tools import AsyncMemoryEngine, MemoryEngine


class HindsightStore(BaseStore):
    """LangGraph's long-term memory store on one hindsight-tools bank.

    ``get``/``put``/``delete``/``list_namespaces`` are exact key-value operations;
    ``search`` without a query lists the items under a namespace prefix (most recently
    updated first), and with a query ranks them by the engine's recall (its final score is
    ``SearchItem.score``). Each item is one memory: the namespace, key and value are kept
    exactly in its metadata, and the text it is found by comes from ``index["fields"]``
    (default ``["$"]``, the whole value) or the ``index`` given to ``put``.

    The engine embeds with its own model, so ``index`` takes only ``fields`` (``dims`` and
    ``embed`` are refused rather than ignored). Items don't expire: a ``ttl`` raises
    ``NotImplementedError``.
    """

    supports_ttl = False

    def __init__(
        self,
        *,
        engine: MemoryEngine | AsyncMemoryEngine,
        bank_id: str = "langgraph",
        index: IndexConfig | None = None,
        budget: Budget = "mid",
        max_tokens: int = 100_000,
    ) -> None:
        if not isinstance(engine, (MemoryEngine, AsyncMemoryEngine)):
            raise TypeError(
                f"engine must be a MemoryEngine or an AsyncMemoryEngine, got "
                f"{type(engine).__name__}"
            )
        extra = set(index or {}) - {"fields"}
        if extra:
            raise ValueError(
                f"index: HindsightStore embeds with the engine's model and takes only "
                f"'fields'; remove {sorted(extra)}"
            )
        fields = tuple((index or {}).get("fields") or ("$",))
        if not all(isinstance(f, str) and f for f in fields):
            raise ValueError(f"index['fields'] must be non-empty strings, got {list(fields)}")
        if budget not in ("low", "mid", "high"):
            raise ValueError(f"budget must be 'low', 'mid' or 'high', got {budget!r}")
        self.engine = engine
        self.config = StoreConfig(bank_id, fields, budget, max_tokens)
        self.index_config = index

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        engine = self.engine
        if not isinstance(engine, MemoryEngine):
            raise TypeError(
                "this HindsightStore was built on an AsyncMemoryEngine: use abatch/aget/"
                "asearch/aput, or pass a MemoryEngine for both"
            )
        program = run_batch(self.config, list(ops))
        return _drive(program, engine, self.config.bank_id)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        engine = self.engine
        aio = engine.aio if isinstance(engine, MemoryEngine) else engine
        program = run_batch(self.config, list(ops))
        result: Any = None
        try:
            while True:
                call = program.send(result)
                method = getattr(aio, call.method)
                result = await method(self.config.bank_id, *call.args, **call.kwargs)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


def _drive(program: BatchProgram, engine: MemoryEngine, bank_id: str) -> list[Result]:
    result: Any = None
    try:
        while True:
            call = program.send(result)
            result = getattr(engine, call.method)(bank_id, *call.args, **call.kwargs)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


__all__: Sequence[str] = ["HindsightStore"]

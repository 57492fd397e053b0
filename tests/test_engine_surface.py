"""The two engines are one surface: the same public names and signatures, the same behaviour
when a step fails, and an async constructor that leaves the event loop free."""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from typing import Any

import pytest

from hindsight_tools import AsyncMemoryEngine, MemoryEngine, Settings, StoreError
from hindsight_tools.engine import aio as aio_module
from hindsight_tools.engine.core import EngineCore
from hindsight_tools.runtime.plan import Plan, Statement
from hindsight_tools.runtime.program import Parallel

# The sync engine's door to its async twin has no counterpart on the twin.
SYNC_ONLY = {"aio"}


def _public(cls: type) -> dict[str, Any]:
    return {
        name: value
        for klass in reversed(cls.__mro__[:-1])
        for name, value in vars(klass).items()
        if not name.startswith("_")
    }


def _shape(fn: Any) -> list[tuple[str, Any, Any, Any]]:
    signature = inspect.signature(fn)
    return [
        (p.name, p.kind, p.default, str(p.annotation).replace("AsyncMemoryEngine", "MemoryEngine"))
        for p in signature.parameters.values()
    ] + [("return", None, None, str(signature.return_annotation).replace("Async", ""))]


def test_both_engines_expose_the_same_public_names() -> None:
    sync, aio = _public(MemoryEngine), _public(AsyncMemoryEngine)
    assert set(sync) - SYNC_ONLY == set(aio)
    for name in aio:
        assert isinstance(sync[name], property) == isinstance(aio[name], property), name


def test_methods_have_the_same_signatures_and_the_async_ones_are_coroutines() -> None:
    sync, aio = _public(MemoryEngine), _public(AsyncMemoryEngine)
    methods = [n for n, v in aio.items() if not isinstance(v, property)]
    assert {"retain", "recall", "backfill_token_vectors", "delete_bank", "open", "close"} <= set(
        methods
    )
    for name in methods:
        assert not inspect.iscoroutinefunction(sync[name]), name
        assert inspect.iscoroutinefunction(aio[name]), name
        assert _shape(sync[name]) == _shape(aio[name]), name
    assert _shape(MemoryEngine.__init__) == _shape(AsyncMemoryEngine.__init__)


def test_the_async_constructor_loads_nothing_on_the_event_loop(
    engine: MemoryEngine, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the core loads the embedder and the cross-encoder, seconds of work: not in the
    # constructor, and in open() off the event loop's thread
    built_in: list[int] = []
    real_core = EngineCore

    def recording_core(*args: Any, **kwargs: Any) -> Any:
        built_in.append(threading.get_ident())
        return real_core(*args, **kwargs)

    monkeypatch.setattr(aio_module, "EngineCore", recording_core)

    async def scenario() -> tuple[list[int], int, str, bool, str]:
        aengine = AsyncMemoryEngine(engine.database_url, settings=settings)
        after_constructor = list(built_in)
        with pytest.raises(StoreError, match="not open yet"):
            _ = aengine.reranker_name
        with pytest.raises(StoreError, match="not open yet"):
            _ = aengine.database_url
        assert aengine.settings.database_url == engine.database_url
        async with aengine:
            loop_thread = threading.get_ident()
            return (
                after_constructor,
                loop_thread,
                aengine.reranker_name,
                aengine.late_interaction,
                aengine.database_url,
            )

    after_constructor, loop_thread, reranker, late, url = asyncio.run(scenario())
    assert after_constructor == []
    assert len(built_in) == 1 and built_in[0] != loop_thread
    assert (reranker, late, url) == (
        engine.reranker_name,
        engine.late_interaction,
        engine.database_url,
    )


def test_the_sync_engine_opens_like_its_twin(settings: Settings) -> None:
    engine = MemoryEngine(settings=settings)
    assert engine.open() is engine
    engine.close()
    with pytest.raises(StoreError, match="closed"):
        engine.open()


def _failing_beside_slow() -> Any:
    def slow() -> Plan[None]:
        yield Statement("SELECT pg_sleep(4)")

    def failing() -> Plan[None]:
        yield Statement("SELECT 1 / 0")

    yield Parallel({"slow": slow(), "failing": failing()})


def test_a_failing_step_fails_the_call_at_once_in_both_engines(
    engine: MemoryEngine, settings: Settings
) -> None:
    started = time.perf_counter()
    with pytest.raises(StoreError, match="division by zero"):
        engine._drive(_failing_beside_slow())
    sync_seconds = time.perf_counter() - started

    async def scenario() -> float:
        async with AsyncMemoryEngine(engine.database_url, settings=settings) as aengine:
            started = time.perf_counter()
            with pytest.raises(StoreError, match="division by zero"):
                await aengine._drive(_failing_beside_slow())
            return time.perf_counter() - started

    async_seconds = asyncio.run(scenario())
    # neither waits for the 4-second arm beside the one that failed
    assert sync_seconds < 3, sync_seconds
    assert async_seconds < 3, async_seconds
    time.sleep(4)  # the sync side's slow arm finishes on its own before the pool is reused

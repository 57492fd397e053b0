"""The async engine runs the same programs on an async pool."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from hindsight_tools import AsyncMemoryEngine, InvalidRequestError, MemoryEngine, Settings
from hindsight_tools.runtime.plan import Plan, Statement
from hindsight_tools.runtime.program import Blocking, Parallel


def test_async_engine_retains_and_recalls(
    engine: MemoryEngine, settings: Settings, bank: str
) -> None:
    async def scenario() -> list[str]:
        async with AsyncMemoryEngine(engine.database_url, settings=settings) as aengine:
            await aengine.retain(
                bank,
                [
                    {"id": "a", "text": "Bruno plays the cello in an orchestra"},
                    {"id": "b", "text": "The train to Vienna leaves at nine"},
                ],
            )
            results = await asyncio.gather(
                aengine.recall(bank, "Which instrument does Bruno play?"),
                aengine.recall(bank, "When does the train leave?"),
            )
            with pytest.raises(InvalidRequestError, match="budget"):
                await aengine.recall(bank, "x", budget="max")  # type: ignore[arg-type]
            return [r.memories[0].id for r in results]

    assert asyncio.run(scenario()) == ["a", "b"]
    assert [m.id for m in engine.recall(bank, "cello").memories][:1] == ["a"]


def test_sync_engine_gives_its_async_twin_on_the_same_store(
    engine: MemoryEngine, bank: str
) -> None:
    engine.retain(bank, [{"id": "x", "text": "Quokkas live on Rottnest Island"}])

    async def scenario() -> str:
        twin = engine.aio
        try:
            return (await twin.recall(bank, "Where do quokkas live?")).memories[0].id
        finally:
            await twin.close()

    assert asyncio.run(scenario()) == "x"
    assert engine.recall(bank, "quokkas").memories[0].id == "x"  # the sync side is untouched


def test_async_engine_with_the_embedded_default(settings: Settings, bank: str) -> None:
    async def scenario() -> int:
        async with AsyncMemoryEngine(settings=settings) as aengine:
            result = await aengine.retain(bank, [{"text": "Embedded and async"}])
            await aengine.delete_bank(bank)
            return result.created

    assert asyncio.run(scenario()) == 1


def test_the_async_twin_serves_one_event_loop_after_another(
    engine: MemoryEngine, bank: str
) -> None:
    engine.retain(bank, [{"id": "q", "text": "Quokkas live on Rottnest Island"}])

    async def scenario() -> tuple[list[str], object]:
        twin = engine.aio
        results = await asyncio.gather(*(twin.recall(bank, "quokkas") for _ in range(3)))
        return [r.memories[0].id for r in results], twin._pool

    first_ids, first_pool = asyncio.run(scenario())
    second_ids, second_pool = asyncio.run(scenario())
    assert first_ids == second_ids == ["q", "q", "q"]
    # a pool's workers are tasks of the loop that opened it: the new loop gets its own pool
    assert second_pool is not first_pool

    async def close_then_reuse() -> str:
        await engine.aio.close()
        return (await engine.aio.recall(bank, "quokkas")).memories[0].id

    assert asyncio.run(close_then_reuse()) == "q"


def test_an_event_loop_ends_cleanly_with_the_twin_left_open(
    engine: MemoryEngine, bank: str
) -> None:
    # asyncio.run cancels what is left when it ends; a pool still growing then used to hang
    # it (a worker cancelled while connecting swallowed the cancellation)
    engine.retain(bank, [{"id": "q", "text": "Quokkas live on Rottnest Island"}])

    async def scenario() -> None:
        await asyncio.gather(*(engine.aio.recall(bank, "quokkas") for _ in range(4)))

    def many_loops() -> None:
        for _ in range(20):
            asyncio.run(scenario())

    runner = threading.Thread(target=many_loops, daemon=True)
    runner.start()
    runner.join(timeout=240)
    assert not runner.is_alive(), "an event loop hung at shutdown"


def _meeting_program() -> Any:
    """Two CPU steps that can only finish if they run at the same time (each waits for the
    other at a barrier), beside a database plan."""
    barrier = threading.Barrier(2, timeout=10)

    def meet(name: str) -> str:
        barrier.wait()
        return name

    def one() -> Plan[int]:
        rows = yield Statement("SELECT 41 + 1")
        return int(rows[0][0])

    done = yield Parallel(
        {
            "left": Blocking(lambda: meet("left")),
            "right": Blocking(lambda: meet("right")),
            "plan": one(),
        }
    )
    return {name: value for name, (value, _seconds) in done.items()}


def test_parallel_runs_blocking_work_side_by_side_in_both_engines(
    engine: MemoryEngine, settings: Settings
) -> None:
    expected = {"left": "left", "right": "right", "plan": 42}
    assert engine._drive(_meeting_program()) == expected

    async def scenario() -> Any:
        async with AsyncMemoryEngine(engine.database_url, settings=settings) as aengine:
            return await aengine._drive(_meeting_program())

    assert asyncio.run(scenario()) == expected

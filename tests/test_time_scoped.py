"""Questions that name a period: its memories that match come first, and nothing is filtered.

On the demo's invented life, with the real models and database, as `make demo` asks them.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest

from hindsight_tools import AsyncMemoryEngine, MemoryEngine, Settings
from hindsight_tools.cli.demo import DEMO_NOW, demo_items

SUMMER_2023 = {"demo-12", "demo-13", "demo-14"}  # half marathon, Dolomites, Rust
AUTUMN_2023, NEW_YEAR_2024 = datetime(2023, 9, 30), datetime(2024, 1, 5)


@pytest.fixture
def demo(demo_bank: str) -> str:
    return demo_bank


def _in(start: str, end: str) -> set[str]:
    """The demo memories whose date lies in ``[start, end)``."""
    found = set()
    for item in demo_items():
        day = item.get("occurred_start")
        if day is not None and start <= str(day)[:10] < end:
            found.add(item["id"])
    return found


def test_the_named_season_comes_first(engine: MemoryEngine, demo: str) -> None:
    result = engine.recall(demo, "What did Priya do in summer 2023?", query_timestamp=DEMO_NOW)
    assert {m.id for m in result.memories[:3]} == SUMMER_2023
    assert _in("2023-06-01", "2023-09-01") == SUMMER_2023


@pytest.mark.parametrize(
    ("question", "asked", "start", "end"),
    [
        # asked two years later: read alone, "spring" and "June" would be this year's
        ("What did Priya do in spring and summer 2023?", DEMO_NOW, "2023-03-01", "2023-09-01"),
        ("What did Priya do in June-July 2023?", DEMO_NOW, "2023-06-01", "2023-08-01"),
        # read alone, "spring" and "October" would leave the second period's to chance
        ("What happened in the spring and summer?", AUTUMN_2023, "2023-03-01", "2023-09-01"),
        ("What did Priya do in October and November?", NEW_YEAR_2024, "2023-10-01", "2023-12-01"),
        # a name in a relative year: read against now, "summer" would be a year or two off
        ("What did Priya do in the summer two years ago?", DEMO_NOW, "2023-06-01", "2023-09-01"),
        (
            "What did Priya do in the summer of the year before last?",
            DEMO_NOW,
            "2023-06-01",
            "2023-09-01",
        ),
    ],
)
def test_the_whole_period_named_leads(
    engine: MemoryEngine,
    demo: str,
    question: str,
    asked: datetime | str,
    start: str,
    end: str,
) -> None:
    expected = _in(start, end)
    assert len(expected) >= 2
    result = engine.recall(demo, question, query_timestamp=asked)
    assert {m.id for m in result.memories[: len(expected)]} == expected


def test_two_names_after_last_lead(engine: MemoryEngine, demo: str) -> None:
    # read alone, "last summer" would leave out the fall: Priya's Harbor Labs offer
    question = "What did Priya do last summer and fall?"
    result = engine.recall(demo, question, query_timestamp=datetime(2024, 3, 1))
    assert SUMMER_2023 | {"demo-16"} <= {m.id for m in result.memories[:5]}


def test_a_weekday_counted_from_a_date_is_that_day(engine: MemoryEngine, demo: str) -> None:
    # read as "after July 1, 2023", every later memory would be in the window
    question = "What did Priya do on the Saturday after July 1, 2023?"
    result = engine.recall(demo, question, query_timestamp=DEMO_NOW)
    assert result.memories[0].id == "demo-13"  # the Dolomites, from Saturday July 8


def test_a_relative_period_resolves_against_the_query_time(engine: MemoryEngine, demo: str) -> None:
    spring = _in("2025-03-01", "2025-06-01")
    assert len(spring) >= 4
    result = engine.recall(demo, "What happened last spring?", query_timestamp=DEMO_NOW)
    assert {m.id for m in result.memories[: len(spring)]} == spring
    # asked a year later, "last spring" is another period
    later = engine.recall(demo, "What happened last spring?", query_timestamp=datetime(2024, 7, 1))
    assert {m.id for m in later.memories[:3]} <= _in("2024-03-01", "2024-06-01")
    assert not spring & {m.id for m in later.memories[:3]}


def test_the_window_ranks_but_never_filters(engine: MemoryEngine, demo: str) -> None:
    # nothing is dated in 2019: the matching memories still come back
    result = engine.recall(demo, "What did Priya do in summer 2019?", query_timestamp=DEMO_NOW)
    assert len(result.memories) >= 10
    # and the period's memories, matching nothing else the question asks, don't bury the
    # one memory that answers it (undated, so outside every window)
    dish = engine.recall(
        demo, "What was Priya's favourite dish in summer 2023?", query_timestamp=DEMO_NOW
    )
    assert any("masala dosa" in m.text for m in dish.memories[:3])


def test_explain_shows_the_window_and_the_arms(engine: MemoryEngine, demo: str) -> None:
    result = engine.recall(
        demo, "What did Priya do in summer 2023?", query_timestamp=DEMO_NOW, trace=True
    )
    assert result.trace is not None and result.trace.time_window is not None
    start, end = result.trace.time_window
    assert start is not None and end is not None
    assert (start.date().isoformat(), end.date().isoformat()) == ("2023-06-01", "2023-08-31")
    for memory in result.memories[:3]:
        assert "temporal" in memory.source_ranks
        assert memory.scores.final > result.memories[3].scores.final


def test_the_async_engine_orders_the_same(
    engine: MemoryEngine, settings: Settings, demo: str
) -> None:
    async def ask() -> list[str]:
        async with AsyncMemoryEngine(engine.database_url, settings=settings) as aengine:
            found = await aengine.recall(
                demo, "What did Priya do in summer 2023?", query_timestamp=DEMO_NOW
            )
            return [m.id for m in found.memories]

    sync = [
        m.id
        for m in engine.recall(
            demo, "What did Priya do in summer 2023?", query_timestamp=DEMO_NOW
        ).memories
    ]
    assert asyncio.run(ask())[:10] == sync[:10]

"""A question that places what it asks by an event ranks by the period on that side of it,
dated by its best match (recall/anchored.py).

On the demo's invented life, with the real models and database, as `make demo` retains it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC

import pytest

from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.cli.demo import DEMO_NOW
from hindsight_tools.cli.format import format_result
from hindsight_tools.models import RecalledMemory

# Lena Vogel contacted Priya (October 2023), Priya accepted Harbor Labs' offer (November)
CAUSES_OF_LEAVING = {"demo-15", "demo-16"}
LEFT_LUMEN = "demo-17"  # 2024-01-19
WHY = "Why did Priya leave Lumen Health?"
MOVED_TO_AMSTERDAM = "2024-02-01"


@pytest.fixture
def demo(demo_bank: str) -> str:
    return demo_bank


@pytest.fixture(scope="module")
def without(engine: MemoryEngine, settings: Settings) -> Iterator[MemoryEngine]:
    """The same store with periods named by an event turned off."""
    off = settings.with_overrides({"event_window_alpha": 0.0})
    with MemoryEngine(engine.database_url, settings=off) as other:
        yield other


def test_the_causes_before_an_event_come_up(
    engine: MemoryEngine, without: MemoryEngine, demo: str
) -> None:
    result = engine.recall(demo, WHY, query_timestamp=DEMO_NOW, trace=True)
    assert result.memories[0].id == LEFT_LUMEN
    assert {m.id for m in result.memories[:6]} >= CAUSES_OF_LEAVING
    # the words of the question match her years at Lumen Health better than the offer
    # that made her leave: ranked by wording alone, the causes are further down
    plain = without.recall(demo, WHY, query_timestamp=DEMO_NOW, trace=True)
    assert not {m.id for m in plain.memories[:6]} >= CAUSES_OF_LEAVING
    assert plain.trace is not None and plain.trace.time_window is None
    assert plain.trace.event_anchor is None


def test_the_trace_and_explain_show_the_period_and_its_event(
    engine: MemoryEngine, demo: str
) -> None:
    result = engine.recall(demo, WHY, query_timestamp=DEMO_NOW, trace=True)
    assert result.trace is not None and result.trace.event_anchor == LEFT_LUMEN
    assert result.trace.time_window is not None
    start, end = result.trace.time_window
    assert start is not None and end is not None
    # 180 days before the day she left, that day included
    assert (start.date().isoformat(), end.date().isoformat()) == ("2023-07-23", "2024-01-19")
    last = format_result(result, explain=True).splitlines()[-1]
    assert last == "time window 2023-07-23 to 2024-01-19, dated by the event in memory demo-17"


def test_after_an_event_the_period_starts_with_it(
    engine: MemoryEngine, without: MemoryEngine, demo: str
) -> None:
    question = "What did Priya do after she moved to Amsterdam?"
    result = engine.recall(demo, question, query_timestamp=DEMO_NOW, trace=True)
    assert result.trace is not None and result.trace.time_window is not None
    start, end = result.trace.time_window
    assert start is not None and end is not None
    anchors = [m for m in result.memories if m.id == result.trace.event_anchor]
    assert len(anchors) == 1
    assert start.date().isoformat() == _day(anchors[0]) and (end - start).days == 180
    # what came before the move (2024-02-01) leaves the first places; ranked by wording
    # alone, Lena Vogel's message of October 2023 about Amsterdam is among them
    moved = MOVED_TO_AMSTERDAM
    assert all(_day(m) >= moved for m in result.memories[:5])
    plain = without.recall(demo, question, query_timestamp=DEMO_NOW)
    assert any("" < _day(m) < moved for m in plain.memories[:5])


def _day(memory: RecalledMemory) -> str:
    """The memory's day, ISO; "" when it has none (before any day)."""
    start = memory.occurred_start
    return "" if start is None else start.astimezone(UTC).date().isoformat()


def test_a_named_period_is_not_replaced_by_an_event(engine: MemoryEngine, demo: str) -> None:
    result = engine.recall(
        demo, "Why did Priya go to Austin in March 2023?", query_timestamp=DEMO_NOW, trace=True
    )
    assert result.trace is not None and result.trace.event_anchor is None
    assert result.trace.time_window is not None
    start, end = result.trace.time_window
    assert start is not None and end is not None
    assert (start.date().isoformat(), end.date().isoformat()) == ("2023-03-01", "2023-03-31")

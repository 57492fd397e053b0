"""The import's own temporal-neighbour search on hand-made timelines (that it makes the
links retain's SQL makes is checked against the store in tests/test_import.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hindsight_tools.retain.timeline import Timeline, microseconds

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)


def _held(ids: list[str], times: list[datetime | None], hours: float, limit: int) -> Timeline:
    """A timeline holding ``ids`` at ``times``, given as the store gives them."""
    return Timeline(ids, [None if t is None else microseconds(t) for t in times], hours, limit)


def _pairs(
    timeline: Timeline, ids: list[str], times: list[datetime | None]
) -> list[tuple[str, str]]:
    links = timeline.add(ids, times)
    return list(zip(links.from_ids, links.to_ids, strict=True))


def test_microseconds_are_exact_far_from_1970() -> None:
    late = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
    assert microseconds(late) - microseconds(late - timedelta(microseconds=1)) == 1
    assert microseconds(datetime(1970, 1, 1, tzinfo=UTC)) == 0


def test_nearest_first_then_ids_in_byte_order_up_to_the_limit() -> None:
    held = _held(["b", "é", "B", "a"], [T0] * 4, 24, 3)
    pairs = _pairs(held, ["new"], [T0 + timedelta(minutes=1)])
    # all four are a minute away: ids byte-ordered, "B" < "a" < "b" < "é"
    assert pairs == [("new", "B"), ("new", "a"), ("new", "b")]


def test_both_sides_merge_by_distance_and_the_window_edges_are_inside() -> None:
    ids = ["early-edge", "too-early", "hour-before", "hour-after", "late-edge", "too-late"]
    day, tick = timedelta(hours=24), timedelta(microseconds=1)
    times: list[datetime | None] = [
        T0 - day, T0 - day - tick, T0 - timedelta(hours=1),
        T0 + timedelta(hours=1), T0 + day, T0 + day + tick,
    ]  # fmt: skip
    held = _held(ids, times, 24, 10)
    links = held.add(["x"], [T0])
    assert links.to_ids == ["hour-after", "hour-before", "early-edge", "late-edge"]
    assert links.weights == pytest.approx([1 - 1 / 24, 1 - 1 / 24, 0.3, 0.3])


def test_the_weight_falls_with_distance_to_its_floor() -> None:
    held = _held(["a", "b"], [T0 - timedelta(hours=6), T0 - timedelta(hours=20)], 24, 5)
    assert held.add(["x"], [T0]).weights == pytest.approx([0.75, 0.3])


def test_a_batch_links_within_itself_and_memories_without_a_time_take_no_part() -> None:
    held = _held(["old", "timeless"], [T0, None], 24, 5)
    assert len(held) == 1
    pairs = _pairs(held, ["p", "q", "r"], [T0 + timedelta(hours=1), None, T0])
    assert sorted(pairs) == [("p", "old"), ("p", "r"), ("r", "old"), ("r", "p")]
    assert len(held) == 3


def test_no_links_at_a_limit_of_zero() -> None:
    held = _held(["a"], [T0], 24, 0)
    assert _pairs(held, ["b"], [T0]) == []

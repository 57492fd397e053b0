"""Temporal link neighbours for an import, computed in the importing process.

Retain finds a memory's temporal neighbours in SQL (``links._TEMPORAL_LINKS``): the
nearest ``max_links`` memories of the bank within ``window_hours`` of its event time,
walked along the (bank, event time) index on each side. An import that holds the bank's
ids (:mod:`~hindsight_tools.retain.neighbours`) holds their event times too, in one sorted
list, and finds the same links with a binary search each, beside the database writing the
batch before; the database then only stores them.

The links are those of the SQL path, ties included: on each side nearer in time comes
first, equal times by id in byte order (the SQL orders ids ``COLLATE "C"``); the two sides
merged by distance, then id. The weight is ``max(0.3, 1 - hours / window_hours)``. The
standard library's ``bisect`` is the tool: the list is sorted by time and grows by a
batch at a time.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_HOUR_US = 3_600_000_000
_FLOOR = 0.3  # the weight of a link at the window's edge, as in the SQL


@dataclass(frozen=True)
class TemporalLinks:
    """A batch's temporal links, newer or equal memory first (``from``), as SQL makes them."""

    from_ids: list[str]
    to_ids: list[str]
    weights: list[float]


def microseconds(moment: datetime) -> int:
    """``moment`` (timezone-aware) as whole microseconds since 1970, exactly."""
    return (moment - _EPOCH) // _MICROSECOND


class Timeline:
    """The event times of a bank's memories during one import, in time order."""

    def __init__(
        self,
        ids: Sequence[str],
        moments: Sequence[int | None],
        window_hours: float,
        max_links: int,
    ) -> None:
        """``moments``: the memories' event times in microseconds since 1970 (as the store
        gives them, exactly), None for a memory without one."""
        self._window = round(window_hours * _HOUR_US)
        self._window_hours = window_hours
        self._max = max_links
        held = sorted((t, i) for i, t in zip(ids, moments, strict=True) if t is not None)
        self._times = [t for t, _ in held]
        self._ids = [i for _, i in held]

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, ids: Sequence[str], times: Sequence[datetime | None]) -> TemporalLinks:
        """Take a batch into the timeline and return its links (the batch's own memories
        are each other's neighbours too, as they are once written)."""
        batch = sorted(
            (microseconds(t), i) for i, t in zip(ids, times, strict=True) if t is not None
        )
        # One merge of two sorted runs; among equal times ids ascend, as the SQL orders them
        # (Python compares strings by code point, which is UTF-8's byte order).
        merged = list(heapq.merge(zip(self._times, self._ids, strict=True), batch))
        self._times = [t for t, _ in merged]
        self._ids = [i for _, i in merged]
        from_ids: list[str] = []
        to_ids: list[str] = []
        weights: list[float] = []
        if self._max <= 0:
            return TemporalLinks(from_ids, to_ids, weights)
        for moment, memory_id in batch:
            for distance, other in self._nearest(moment, memory_id):
                from_ids.append(memory_id)
                to_ids.append(other)
                weights.append(max(_FLOOR, 1 - distance / _HOUR_US / self._window_hours))
        return TemporalLinks(from_ids, to_ids, weights)

    def _nearest(self, moment: int, own: str) -> list[tuple[int, str]]:
        times, ids, limit = self._times, self._ids, self._max
        found: list[tuple[int, str]] = []
        # Before, the moment itself included: latest time first, ids ascending within one.
        low = bisect.bisect_left(times, moment - self._window)
        end = bisect.bisect_right(times, moment)
        before = 0
        while end > low and before < limit:
            start = bisect.bisect_left(times, times[end - 1], low, end)
            for j in range(start, end):
                if ids[j] != own and before < limit:
                    found.append((moment - times[j], ids[j]))
                    before += 1
            end = start
        # After: strictly later, up to the window's end, in order.
        first = bisect.bisect_right(times, moment)
        last = min(bisect.bisect_right(times, moment + self._window), first + limit)
        found.extend((times[j] - moment, ids[j]) for j in range(first, last))
        found.sort()
        return found[:limit]

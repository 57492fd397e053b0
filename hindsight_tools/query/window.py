"""The time window a query names: what
:func:`hindsight_tools.query.time_window.extract_time_window` returns (its docstring states
the conventions)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from hindsight_tools.query.spans import TICK

__all__ = ["TimeWindow"]


@dataclass(frozen=True)
class TimeWindow:
    """``[start, end]`` with an inclusive ``end``; ``None`` marks an open side.

    ``vague`` marks words with no edges of their own ("recently", "lately"): the span is
    where to look, not a period the question is about (see
    :data:`hindsight_tools.query.time_window.VAGUE_RULES`)."""

    start: datetime | None
    end: datetime | None
    vague: bool = False

    def centre(self) -> datetime | None:
        if self.start is None or self.end is None:
            return None
        return self.start + (self.end + TICK - self.start) / 2

    def days(self) -> float | None:
        if self.start is None or self.end is None:
            return None
        return (self.end + TICK - self.start) / timedelta(days=1)

    def overlaps(self, start: datetime, end: datetime | None = None) -> bool:
        """Whether ``[start, end]`` (a single moment when ``end`` is None) meets the window."""
        last = start if end is None else end
        return (self.start is None or last >= self.start) and (
            self.end is None or start <= self.end
        )

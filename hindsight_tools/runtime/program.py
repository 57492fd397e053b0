"""Engine programs: the whole of a retain or a recall, written once for both engines.

A program is a generator that yields steps and receives their results:

* :class:`Parallel` — work to run at the same time: database plans, each on its own
  pooled connection and transaction, and :class:`Blocking` work, each in a worker thread;
  the result maps each name to ``(value, seconds)``;
* :class:`Blocking` — CPU-bound work (embedding, reranking); the sync engine calls it
  inline, the async engine in a worker thread so the event loop keeps running.

The sync and async engines differ only in how they carry out these two steps.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from hindsight_tools.runtime.plan import Plan

T = TypeVar("T")


@dataclass(frozen=True)
class Blocking:
    fn: Callable[[], Any]


@dataclass(frozen=True)
class Parallel:
    plans: Mapping[str, Plan[Any] | Blocking]


Step = Parallel | Blocking
Program = Generator[Step, Any, T]
ParallelResult = dict[str, tuple[Any, float]]

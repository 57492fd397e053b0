"""Matrix products that leave the other cores alone.

numpy hands a large product to its BLAS (OpenBLAS in the numpy wheels), which splits it over
one thread per core. After the call those threads keep spinning for a while, waiting for
more work, and on a 2-core host that spin took one of the two cores from the cross-encoder
that runs right after the late-interaction scores: its six pairs at ``mid`` took 86 ms
inside a recall against 52 ms alone. The product itself is a few milliseconds, so one
thread costs less than it frees
(docs/decisions/2026-12-06-late-interaction-product-on-one-blas-thread.md).

The limit comes from ``threadpoolctl`` (the joblib project's tool for this) and holds only
while a product runs; OpenBLAS keeps one thread count for the whole process, so for those
milliseconds it holds for every thread's BLAS calls. threadpoolctl therefore lets one
thread at a time limit OpenBLAS and quietly ignores the others' limits meanwhile: two
recalls scoring at once would leave one product unlimited. The products all run on one
thread of their own instead, one after another (a few milliseconds each). In a child
process forked from this one that thread doesn't exist, so the child makes its own; when
the interpreter is shutting down, a product runs where it is asked, without the limit.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def _executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(1, thread_name_prefix="hindsight-blas")


_PRODUCTS = _executor()


def _after_fork() -> None:
    global _PRODUCTS
    _PRODUCTS = _executor()


os.register_at_fork(after_in_child=_after_fork)


@functools.cache
def _controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _limited(work: Callable[[], T]) -> T:
    with _controller().limit(limits=1, user_api="blas"):
        return work()


def on_one_blas_thread(work: Callable[[], T]) -> T:
    """``work()``, with numpy's BLAS calls in it run on one thread."""
    try:
        future = _PRODUCTS.submit(_limited, work)
    except RuntimeError:  # the interpreter is shutting down
        return work()
    return future.result()

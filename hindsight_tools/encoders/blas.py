"""Matrix products that leave the other cores alone.

numpy hands a large product to its BLAS (OpenBLAS in the numpy wheels), which splits it over
one thread per core. After the call those threads keep spinning for a while, waiting for
more work, and on a 2-core host that spin took one of the two cores from the cross-encoder
that runs right after the late-interaction scores: its six pairs at ``mid`` took 86 ms
inside a recall against 52 ms alone. The product itself is a few milliseconds, so one
thread costs less than it frees
(docs/decisions/2026-12-06-late-interaction-product-on-one-blas-thread.md).

The limit comes from ``threadpoolctl`` (the joblib project's tool for this) and holds only
while a product runs. OpenBLAS keeps one process-wide thread count, so threadpoolctl lets
only one thread, the first to set a limit, change it while that thread lives; the others'
limits are quietly ignored. The products therefore all run on one thread of their own,
which stays that controlling thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_PRODUCTS = ThreadPoolExecutor(1, thread_name_prefix="hindsight-blas")


@functools.cache
def _controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _limited(work: Callable[[], T]) -> T:
    with _controller().limit(limits=1, user_api="blas"):
        return work()


def on_one_blas_thread(work: Callable[[], T]) -> T:
    """``work()``, with numpy's BLAS calls in it run on one thread."""
    return _PRODUCTS.submit(_limited, work).result()

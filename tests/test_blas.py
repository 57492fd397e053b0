"""The late-interaction product runs on one BLAS thread and leaves no BLAS thread spinning
after it, which would take a core from the cross-encoder that runs next."""

from __future__ import annotations

import threading
import time

import numpy as np
from threadpoolctl import threadpool_info

from hindsight_tools.encoders.blas import on_one_blas_thread
from hindsight_tools.encoders.late_interaction import maxsim, pack


def blas_threads() -> int:
    """Threads of numpy's own BLAS."""
    found = [i for i in threadpool_info() if i["user_api"] == "blas" and "numpy" in i["filepath"]]
    assert found, threadpool_info()
    return int(found[0]["num_threads"])


def test_the_limit_holds_inside_and_is_put_back_after() -> None:
    before = blas_threads()
    assert on_one_blas_thread(blas_threads) == 1
    assert blas_threads() == before


def _maxsim() -> None:
    rng = np.random.default_rng(0)
    query = rng.standard_normal((32, 96)).astype(np.float32)
    documents = [pack(rng.standard_normal((128, 96)).astype(np.float32)) for _ in range(300)]
    maxsim(query, documents, 96)


def _idle_cpu() -> float:
    """CPU seconds this process burns over the next 0.2 s while its own threads wait."""
    started = time.process_time()
    time.sleep(0.2)
    return time.process_time() - started


def test_no_cpu_is_burnt_after_maxsims_asked_from_several_threads_at_once() -> None:
    # a BLAS worker left spinning burns most of the 0.2 s after the last product (the
    # previous code: about 0.1 s); recalls score from whichever worker thread is free,
    # several at once
    _maxsim()
    burnt = {"main": _idle_cpu()}
    start = threading.Barrier(2)

    def ask() -> None:
        start.wait(10)
        for _ in range(20):
            _maxsim()

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    burnt["after both threads"] = _idle_cpu()
    assert max(burnt.values()) < 0.05, burnt

"""Run a function in N threads at once, each on its own database connection."""

import threading
from collections.abc import Callable
from typing import Any

from django.db import connections


def run_concurrently(count: int, fn: Callable[[int], Any], *, timeout: float = 60) -> list[Any]:
    """Start `count` threads that wait at a barrier, then call fn(i); return results or exceptions."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def worker(i: int) -> None:
        try:
            barrier.wait(timeout=timeout)
            results[i] = fn(i)
        except BaseException as exc:  # noqa: BLE001 - the caller inspects what each thread got
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
        assert not thread.is_alive(), "a thread did not finish in time"
    return results

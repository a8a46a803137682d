"""Named points where a test can inject a fault (a `kill -9`, say) into a running process.

In production nothing is installed and `point()` does nothing. Tests and the reliability experiments
install a hook: tests/worker/crash_app.py (the resume worker) and tests/reliability/crash_wsgi.py (the web
process) kill their own process with SIGKILL at the point they are told to. The kernel owns the hook so the
web process's points (harness.http.idempotency) and the worker's (worker.faults re-exports this) share one.
"""

from collections.abc import Callable

_hook: Callable[[str], None] | None = None


def point(name: str) -> None:
    if _hook is not None:
        _hook(name)


def install(hook: Callable[[str], None] | None) -> None:
    """Call `hook(name)` at every named point from now on (None removes it)."""
    global _hook
    _hook = hook

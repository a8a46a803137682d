"""A Celery task's log context and queue lag: the sender's ids ride in the message, the worker binds them.

Kernel plumbing, as harness.ops.observe is for a request: `connect()` hooks it to Celery's signals; the Celery app
(config.celery) calls it, so it runs in the web processes that send tasks and in the worker alike.
worker.tasks reads SENT_AT_HEADER from here, not from config: no app imports the wiring.
"""

import time
from typing import Any

from celery.signals import before_task_publish, task_postrun, task_prerun

# --- the request's ids travel with the task; the queue's lag is measured ------------------------------------
# The sender's log context (request id, project, run...) and the time of sending ride in the message's headers;
# the worker binds them with the task's own id for the task's length (harness.ops.logs) and counts the wait
# (harness.ops.metrics.TASK_QUEUE_LAG). An eager task runs inside its caller's context: nothing to carry.
CONTEXT_HEADER = "harness_context"
SENT_AT_HEADER = "harness_sent_at"


def _carry_context(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    from harness.ops import logs

    if headers is not None:
        headers[CONTEXT_HEADER] = logs.current()
        headers[SENT_AT_HEADER] = time.time()


def _header(task: Any, name: str) -> Any:
    request = getattr(task, "request", None)
    value = getattr(request, name, None)
    if value is None:  # where Celery leaves headers it does not know, depending on the message's protocol
        value = (getattr(request, "headers", None) or {}).get(name)
    return value


def _enter_task_context(sender: Any = None, task_id: str | None = None, task: Any = None, **kwargs: Any) -> None:
    if task is None or getattr(task.request, "is_eager", False):
        return
    from harness.ops import logs
    from harness.ops.metrics import TASK_QUEUE_LAG

    carried = _header(task, CONTEXT_HEADER)
    context = {**(carried if isinstance(carried, dict) else {}), "celery_task_id": task_id, "celery_task": task.name}
    task.request.harness_log_token = logs.enter(**context)
    sent_at = _header(task, SENT_AT_HEADER)
    if isinstance(sent_at, int | float):
        TASK_QUEUE_LAG.labels(task.name).observe(max(0.0, time.time() - sent_at))


def _leave_task_context(sender: Any = None, task: Any = None, **kwargs: Any) -> None:
    token = getattr(getattr(task, "request", None), "harness_log_token", None)
    if token is not None:
        from harness.ops import logs

        logs.leave(token)
        task.request.harness_log_token = None


def connect() -> None:
    """Hook the handlers above to Celery's signals (each once: a second call replaces, by dispatch_uid)."""
    before_task_publish.connect(_carry_context, weak=False, dispatch_uid="harness.ops.task_observe.carry")
    task_prerun.connect(_enter_task_context, weak=False, dispatch_uid="harness.ops.task_observe.enter")
    task_postrun.connect(_leave_task_context, weak=False, dispatch_uid="harness.ops.task_observe.leave")

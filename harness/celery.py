"""The Celery app. Tasks take ids, are acknowledged late and are safe to run twice.

Run it with `celery -A harness worker --beat`: beat sends the recovery pass every
HARNESS_RECOVERY_INTERVAL_SECONDS, and the worker sends one as soon as it is ready, so runs that
were approved (or orphaned by a crash) while no worker ran are resumed at start.
"""

import os
import time
from typing import Any

from celery import Celery
from celery.signals import before_task_publish, task_postrun, task_prerun, worker_process_init, worker_ready

from harness import broker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "harness.settings")
broker.install()  # one Redis client per kombu channel, not one per publish and per ack (redis/redis-py#3624)

app = Celery("harness")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _recover_at_start(sender: Any = None, **kwargs: Any) -> None:
    app.send_task("worker.recovery_pass")
    app.send_task("worker.heartbeat")  # /readyz turns ready now, not at beat's first beat


@worker_process_init.connect
def _trace_this_process(**kwargs: Any) -> None:
    """Traces (only with OTEL_EXPORTER_OTLP_ENDPOINT set), configured in each pool process after the fork."""
    from harness.tracing import tracing_configure

    tracing_configure()


@task_prerun.connect
@task_postrun.connect
def _close_old_connections(sender: Any = None, **kwargs: Any) -> None:
    """Django's rule for persistent connections, per task as per request: close one that broke or
    outlived CONN_MAX_AGE, keep the rest.

    Without CELERY_DB_REUSE_MAX, Celery closed the connection around every task, so each resume paid
    a new connection (connect, a cold server backend, nothing prepared): about half of its time in
    bench scenario 7. Eager tasks run inside the caller's transaction: left alone.
    """
    if getattr(getattr(sender, "request", None), "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()


# --- the request's ids travel with the task; the queue's lag is measured ------------------------------------
# The sender's log context (request id, project, run...) and the time of sending ride in the message's headers;
# the worker binds them with the task's own id for the task's length (harness.logs) and counts the wait
# (harness.metrics.TASK_QUEUE_LAG). An eager task runs inside its caller's context: nothing to carry.
CONTEXT_HEADER = "harness_context"
SENT_AT_HEADER = "harness_sent_at"


@before_task_publish.connect
def _carry_context(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    from harness import logs

    if headers is not None:
        headers[CONTEXT_HEADER] = logs.current()
        headers[SENT_AT_HEADER] = time.time()


def _header(task: Any, name: str) -> Any:
    request = getattr(task, "request", None)
    value = getattr(request, name, None)
    if value is None:  # where Celery leaves headers it does not know, depending on the message's protocol
        value = (getattr(request, "headers", None) or {}).get(name)
    return value


@task_prerun.connect
def _enter_task_context(sender: Any = None, task_id: str | None = None, task: Any = None, **kwargs: Any) -> None:
    if task is None or getattr(task.request, "is_eager", False):
        return
    from harness import logs
    from harness.metrics import TASK_QUEUE_LAG

    carried = _header(task, CONTEXT_HEADER)
    context = {**(carried if isinstance(carried, dict) else {}), "celery_task_id": task_id, "celery_task": task.name}
    task.request.harness_log_token = logs.enter(**context)
    sent_at = _header(task, SENT_AT_HEADER)
    if isinstance(sent_at, int | float):
        TASK_QUEUE_LAG.labels(task.name).observe(max(0.0, time.time() - sent_at))


@task_postrun.connect
def _leave_task_context(sender: Any = None, task: Any = None, **kwargs: Any) -> None:
    token = getattr(getattr(task, "request", None), "harness_log_token", None)
    if token is not None:
        from harness import logs

        logs.leave(token)
        task.request.harness_log_token = None

"""The Celery app. Tasks take ids, are acknowledged late and are safe to run twice.

Run it with `celery -A config worker --beat`: beat sends the recovery pass every
HARNESS_RECOVERY_INTERVAL_SECONDS, and the worker sends one as soon as it is ready, so runs that
were approved (or orphaned by a crash) while no worker ran are resumed at start.
"""

import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_process_init, worker_ready

from harness.ops import broker, task_observe

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
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
    from harness.ops.tracing import tracing_configure

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


# After the connection handling above, as when these handlers lived here: the request's ids travel with the task
# and the queue's lag is measured (harness.ops.task_observe), in every process that has the app.
task_observe.connect()

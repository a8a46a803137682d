"""The worker keeps its database connection between tasks, and still drops one that broke or aged.

Celery's Django fixup closes every connection around every task unless CELERY_DB_REUSE_MAX is set:
each resume then opened a new connection to a cold server backend, with nothing prepared.
"""

import time
from types import SimpleNamespace

import pytest
from celery.fixups.django import DjangoWorkerFixup
from celery.signals import task_postrun, task_prerun
from django.db import connection

from config.celery import app


class _WorkerTask:
    """What the signals get as their sender: a task whose request did not run eagerly."""

    request = SimpleNamespace(is_eager=False)


WORKER_TASK = _WorkerTask()


@pytest.mark.django_db(transaction=True)
def test_the_celery_fixup_leaves_the_connection_open_between_tasks() -> None:
    fixup = DjangoWorkerFixup(app)
    # A connection of this test's own: after a non-transactional test (which leaves its connection open) the
    # process's may be older than CONN_MAX_AGE (60 s), and the hook rightly closes that one: the test failed
    # whenever it ran more than a minute into an xdist worker's life right after such a test.
    connection.close()
    connection.ensure_connection()
    backend = connection.connection.info.backend_pid
    for _ in range(10):  # what the fixup runs before and after each of five tasks
        fixup.close_database()
        task_prerun.send(sender=WORKER_TASK)
        task_postrun.send(sender=WORKER_TASK)
    assert connection.connection is not None and not connection.connection.closed
    assert connection.connection.info.backend_pid == backend


@pytest.mark.django_db(transaction=True)
def test_a_connection_past_conn_max_age_or_broken_is_closed_after_a_task() -> None:
    connection.ensure_connection()
    connection.close_at = time.monotonic() - 1  # outlived CONN_MAX_AGE
    task_postrun.send(sender=WORKER_TASK)
    assert connection.connection is None
    connection.ensure_connection()
    connection.connection.close()  # the server went away
    connection.errors_occurred = True
    task_prerun.send(sender=WORKER_TASK)
    assert connection.connection is None

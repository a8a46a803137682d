"""The Celery app. Tasks take ids, are acknowledged late and are safe to run twice.

Run it with `celery -A harness worker --beat`: beat sends the recovery pass every
HARNESS_RECOVERY_INTERVAL_SECONDS, and the worker sends one as soon as it is ready, so runs that
were approved (or orphaned by a crash) while no worker ran are resumed at start.
"""

import os
from typing import Any

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "harness.settings")

app = Celery("harness")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _recover_at_start(sender: Any = None, **kwargs: Any) -> None:
    app.send_task("runs_app.recovery_pass")

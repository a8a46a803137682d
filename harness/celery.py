"""The Celery app. Tasks take ids, are acknowledged late and are safe to run twice."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "harness.settings")

app = Celery("harness")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

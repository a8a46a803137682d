"""Celery tasks of runs_app (thin: each calls a service)."""

from celery import shared_task

from runs_app import retention
from runs_app.services.stale_runs import runs_end_stale


@shared_task(name="runs.retention_pass")
def retention_pass_all() -> dict[str, dict[str, int]]:
    return retention.retention_pass_all()


@shared_task(name="runs.end_stale")
def end_stale_runs() -> int:
    return runs_end_stale()

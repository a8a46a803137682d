"""Celery tasks of runs_app (thin: each calls a service)."""

from celery import shared_task

from runs_app import retention


@shared_task(name="runs.retention_pass")
def retention_pass_all() -> dict[str, dict[str, int]]:
    return retention.retention_pass_all()


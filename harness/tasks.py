"""Housekeeping tasks of the kernel."""

from celery import shared_task


@shared_task(name="harness.prune_idempotent_requests")
def prune_idempotent_requests() -> int:
    from harness.http.idempotency import idempotent_requests_prune

    return idempotent_requests_prune()

"""Reads of LangGraph threads past their checkpoints (runs_app.services.thread_lifecycle writes them): where a
thread was copied from and to, and its time to live. Tenant-scoped: each takes the caller's projects or a run
already read through them."""

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import connection

from harness.http.errors import NotFoundError
from harness.models import AuditEntry
from harness.tenancy import EndUserScope
from runs_app.models import RetentionPolicy, Run

THREAD_TASK_MODE = "langgraph"  # runs_app.services.threads.THREAD_TASK_MODE


def thread_copies(*, project_ids: Sequence[int], run: Run) -> dict[str, Any]:
    """Where a thread was copied from and to (the `thread.copied` audit entries): for the lineage pages."""
    entries = AuditEntry.objects.filter(project_id__in=project_ids, action="thread.copied")
    came = entries.filter(data__to_run=run.pk).order_by("-id").values_list("data", flat=True).first()
    went = list(entries.filter(data__from_run=run.pk).order_by("id").values_list("data", flat=True)[:50])
    return {"from": came, "to": went}


def project_thread_ttl(project_id: int) -> int | None:
    """The project's default thread TTL (its retention policy's `thread_ttl_days`), or None."""
    return (RetentionPolicy.objects.filter(project_id=project_id).values_list("thread_ttl_days", flat=True)
            .first())


def thread_ttl_of(run: Run) -> int | None:
    """The TTL in days that applies to a thread: its own, else its project's; None: kept."""
    return run.thread_ttl_days if run.thread_ttl_days is not None else project_thread_ttl(run.project_id)


def thread_expires_at(run: Run) -> datetime | None:
    ttl = thread_ttl_of(run)
    return None if ttl is None else run.updated_at + timedelta(days=ttl)


def thread_for_reading(*, project_ids: Sequence[int], thread_id: str, reach: EndUserScope | None = None) -> Run:
    """A thread's run of the caller's projects (of `reach`'s end user, for a narrowed caller); 404
    `thread_not_found` otherwise."""
    runs = Run.objects.filter(project_id__in=list(project_ids), ref=thread_id, task_mode=THREAD_TASK_MODE)
    run = (reach.hanging_off(runs, "session") if reach is not None else runs).order_by("pk").first()
    if run is None:
        raise NotFoundError(f"Thread {thread_id!r} does not exist.", code="thread_not_found")
    return run




# The threads past their TTL (their own, else the project's), that still hold checkpoints or writes, oldest change
# first, each with the retention keep rule that needs it (harness_retention_needed_runs, as the pass's `runs`
# rules read it), or NULL.
_EXPIRED_SQL = """
SELECT r.id, r.ref, n.kept_by
  FROM runs_app_run r
  LEFT JOIN runs_app_retentionpolicy p ON p.project_id = r.project_id
  LEFT JOIN (SELECT DISTINCT ON (x.id) x.id, x.kept_by FROM harness_retention_needed_runs(%(project)s) x
              ORDER BY x.id, x.kept_by DESC) n ON n.id = r.id
 WHERE r.project_id = %(project)s AND r.task_mode = 'langgraph' AND r.ref <> ''
   AND coalesce(r.thread_ttl_days, p.thread_ttl_days) IS NOT NULL
   AND r.updated_at < %(now)s - make_interval(days => coalesce(r.thread_ttl_days, p.thread_ttl_days)::int)
   AND (EXISTS (SELECT 1 FROM runs_app_checkpoint c WHERE c.run_id = r.id AND c.external_id <> '')
        OR EXISTS (SELECT 1 FROM runs_app_checkpointwrite w WHERE w.run_id = r.id))
 ORDER BY n.kept_by IS NOT NULL, r.updated_at, r.id
 LIMIT %(limit)s
"""


def expired_threads(*, project_id: int, now: datetime, limit: int) -> list[tuple[int, str, str | None]]:
    """(run, thread id, keep rule or None) of the project's threads past their TTL at `now`: what the TTL pass
    deletes (those with no rule) and the dry run counts."""
    with connection.cursor() as cur:
        cur.execute(_EXPIRED_SQL, {"project": project_id, "now": now, "limit": limit})
        return [(row[0], row[1], row[2]) for row in cur.fetchall()]


def thread_ttl_card(run: Run) -> dict[str, Any] | None:
    """What a LangGraph thread's run page says of its time to live (None for any other run)."""
    if run.task_mode != THREAD_TASK_MODE or not run.ref:
        return None
    return {"ttl_days": thread_ttl_of(run), "own": run.thread_ttl_days is not None,
            "expires_at": thread_expires_at(run)}

"""No console page issues a number of queries that grows with the rows on it (10 vs 1,000 rows)."""

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from harness.canonical import digest
from harness.models import Project
from memory_app.models import MemoryRecord, MemoryStatus
from runs_app.models import (
    ApprovalRequest,
    ApprovalStatus,
    Checkpoint,
    ExternalEffect,
    NodeExecution,
    Run,
    RunEvent,
    RunStatus,
)
from runs_app.selectors.paging import seek_cursor
from sessions_app.models import Session, SessionItem
from tests import factories

pytestmark = pytest.mark.django_db


def count_queries(client: Any, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(ctx.captured_queries)


def grow(project: Project, n: int, start: int) -> dict[str, Any]:
    """Add `n` rows of every kind a page lists; `start` keeps refs and hashes unique across calls."""
    session = factories.make_session(project, ref=f"S-q{start}")
    task = factories.make_task(project, ref=f"T-q{start}")
    runs = Run.objects.bulk_create(
        Run(project=project, session=session, task=task, ref=f"R-q{start + i}", status=RunStatus.WAITING_APPROVAL,
            active_agent=f"agent-{i % 7}")
        for i in range(n)
    )
    ApprovalRequest.objects.bulk_create(
        ApprovalRequest(project=project, run=run, tool="git.push", arguments={"i": i}, action_fingerprint=digest(i),
                        idempotency_key=f"k{start + i}", requested_by="agent:coder", status=ApprovalStatus.PENDING)
        for i, run in enumerate(runs)
    )
    run = runs[0]
    RunEvent.objects.bulk_create(RunEvent(run=run, seq=i + 1, kind="step", data={"i": i}) for i in range(n))
    NodeExecution.objects.bulk_create(NodeExecution(run=run, node=f"n{i}", attempt=1) for i in range(n))
    ExternalEffect.objects.bulk_create(
        ExternalEffect(project=project, run=run, idempotency_key=f"e{start + i}", tool="t", status="consumed",
                       result_hash="h", receipt=f"r{i}")
        for i in range(n)
    )
    # A lineage: a chain with a fork every tenth checkpoint, bulk-created level by level.
    level = Checkpoint.objects.bulk_create(
        [Checkpoint(project=project, run=run, task=task, label="root", content_hash="x")]
    )
    made = 1
    while made < n:
        width = min(2 if made % 10 == 0 else 1, n - made)
        level = Checkpoint.objects.bulk_create(
            Checkpoint(project=project, run=run, task=task, parent=level[0], label=f"c{made + j}", content_hash="x",
                       depth=made) for j in range(width)
        )
        made += width
    SessionItem.objects.bulk_create(
        SessionItem(session=session, seq=i + 1, role="user", content={"t": i}, run=run if i % 50 == 0 else None)
        for i in range(n)
    )
    Session.objects.bulk_create(Session(project=project, ref=f"S-r{start + i}") for i in range(n))
    MemoryRecord.objects.bulk_create(
        MemoryRecord(project=project, scope="project", content=f"fact {start + i}", content_hash=digest(start + i),
                     provenance_kind="observed", status=MemoryStatus.HELD if i % 2 else MemoryStatus.ACTIVE,
                     expires_at=timezone.now() if i % 3 == 0 else None)
        for i in range(n)
    )
    return {"run": run, "session": session, "task": task, "checkpoints": (level[0].pk, run.checkpoints.first().pk)}


PAGES: list[tuple[str, Callable[[dict], str]]] = [
    ("inbox", lambda g: reverse("runs:approval_inbox")),
    ("inbox filtered", lambda g: reverse("runs:approval_inbox") + "?risk=high&agent=agent-1&older_than="),
    ("approval", lambda g: reverse("runs:approval_detail", args=[g["run"].approvals.first().pk])),
    ("run", lambda g: reverse("runs:run_inspector", args=[g["run"].pk])),
    ("run timeline of a kind", lambda g: reverse("runs:run_inspector", args=[g["run"].pk]) + "?kind=node"),
    ("run lineage", lambda g: reverse("runs:run_lineage", args=[g["run"].pk])),
    ("task lineage", lambda g: reverse("runs:task_lineage", args=[g["task"].pk])),
    ("diff", lambda g: reverse("runs:checkpoint_diff") + "?a={}&b={}".format(*g["checkpoints"])),
    ("sessions", lambda g: reverse("sessions:session_list")),
    ("timeline", lambda g: reverse("sessions:session_timeline", args=[g["session"].pk])),
    ("memory", lambda g: reverse("memory:record_list")),
    ("memory stale", lambda g: reverse("memory:record_list") + "?freshness=stale&text=fact"),
    ("held", lambda g: reverse("memory:held_list")),
    ("dashboard", lambda g: reverse("dashboard")),
    ("tasks", lambda g: reverse("runs:task_list")),
    ("task", lambda g: reverse("runs:task_detail", args=[g["task"].pk])),
    ("runs", lambda g: reverse("runs:run_list")),
    ("runs filtered", lambda g: reverse("runs:run_list") + "?status=waiting_approval&agent=agent-1&q=R-q&sort=created"),
    ("runs page 2", lambda g: reverse("runs:run_list") + "?sort=created&after=" + seek_cursor(g["run"].created_at,
                                                                                              g["run"].pk)),
]


@pytest.mark.slow  # ~10 s in a full run: started first (tests/parallel.py)
def test_query_counts_do_not_grow_with_rows(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    small = grow(project, 10, start=0)
    large = grow(project, 1000, start=10_000)
    counts: dict[str, tuple[int, int]] = {}
    for name, make_url in PAGES:
        few = count_queries(reviewer_client, make_url(small))
        many = count_queries(reviewer_client, make_url(large))
        # At most as many: a page may skip a lookup it has no ids for (the timeline's first page of
        # 1,000 rows holds only runs, so it does not fetch items), but it never adds one per row.
        assert many <= few, f"{name}: {few} queries at 10 rows, {many} at 1,000"
        counts[name] = (few, many)
    print("queries (10 rows, 1,000 rows):", counts)

"""The inbox, timeline and lineage page by seeking (keyset), so a page costs the same however much history there is."""

import re

import pytest
from django.urls import reverse

from harness.actors import Actor
from runs_app.models import ApprovalRequest, RunStatus
from runs_app.selectors import approvals as approvals_sel
from runs_app.selectors import checkpoints as checkpoints_sel
from runs_app.selectors import overview as overview_sel
from runs_app.selectors import paging as paging_sel
from runs_app.services import approval_request_create, checkpoint_create, run_transition
from tests import factories

pytestmark = pytest.mark.django_db


def _waiting_approval(project, n: int) -> int:  # type: ignore[no-untyped-def]
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool="git.push", arguments={"n": n},
                                   idempotency_key=f"k-{run.pk}", actor=Actor.for_agent("coder")).pk


def _shown(body: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'data-approval="(\d+)"', body)]


def test_the_inbox_pages_oldest_first_across_projects_by_cursor(project, other_project, client_for,
                                                                 monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(approvals_sel, "INBOX_PAGE_SIZE", 2)
    made = [_waiting_approval(project if i % 2 else other_project, i) for i in range(5)]
    client = client_for(factories.make_user("vera", role="reviewer", projects=[project, other_project]))
    inbox = reverse("runs:approval_inbox")

    first = client.get(inbox).content.decode()
    assert _shown(first) == made[:2] and "before=" not in first and "5 pending" in first
    newer = re.search(r'href="\?after=([0-9.]+)"', first)
    assert newer is not None
    second = client.get(f"{inbox}?after={newer[1]}").content.decode()
    assert _shown(second) == made[2:4]
    newer = re.search(r'href="\?after=([0-9.]+)"', second)
    assert newer is not None
    last = client.get(f"{inbox}?after={newer[1]}").content.decode()
    assert _shown(last) == made[4:] and 'href="?after=' not in last  # no newer link (the poll keeps its window)
    older = re.search(r'href="\?before=([0-9.]+)"', last)
    assert older is not None
    assert _shown(client.get(f"{inbox}?before={older[1]}").content.decode()) == made[2:4]
    # A filter stays in the links; a cursor that is not one is the start.
    filtered = client.get(f"{inbox}?risk=high").content.decode()
    assert "?risk=high&amp;after=" in filtered
    assert _shown(client.get(f"{inbox}?after=nonsense").content.decode()) == made[:2]


def test_counts_stop_at_the_cap(project) -> None:  # type: ignore[no-untyped-def]
    for i in range(4):
        _waiting_approval(project, i)
    pending = ApprovalRequest.objects.filter(project=project, status="pending")
    assert paging_sel.capped_count(pending, cap=2) == 3  # "2+"
    assert paging_sel.capped_count(pending) == 4 == overview_sel.pending_approval_count(project_ids=[project.pk])


def test_the_lineage_page_draws_a_window_at_the_head_and_links_to_older(project, reviewer_client,
                                                                        monkeypatch) -> None:  # type: ignore[no-untyped-def]
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    chain: list[int] = []
    for i in range(12):
        chain.append(checkpoint_create(project=project, run_id=run.pk, parent_id=chain[-1] if chain else None,
                                       label=f"c{i}", state={"i": i}).pk)
    # A branch off the newest window's top: drawn with the window.
    branch = checkpoint_create(project=project, run_id=run.pk, parent_id=chain[-5], label="branch").pk
    run.refresh_from_db()
    run.last_checkpoint_id = chain[-1]

    rows, older = checkpoints_sel.lineage_window(project_ids=[project.pk], run=run, size=5)
    assert [c.pk for c in rows] == chain[-5:] + [branch] and older == chain[-6]
    rows, older = checkpoints_sel.lineage_window(project_ids=[project.pk], run=run, size=5, before=older)
    assert [c.pk for c in rows] == chain[-10:-5] and older == chain[-11]
    rows, older = checkpoints_sel.lineage_window(project_ids=[project.pk], run=run, size=5, before=older)
    # At the root: its ancestors end, and the walk down from the root fills the window.
    assert [c.pk for c in rows] == chain[:5] and older is None
    # another project's: nothing
    assert checkpoints_sel.lineage_window(project_ids=[project.pk + 1000], run=run, size=5) == ([], None)
    # Anchored at the branch, the walk down from its topmost ancestor takes siblings in id order:
    # c8 before the later branch, whatever plan PostgreSQL picks.
    rows, _ = checkpoints_sel.lineage_window(project_ids=[project.pk], run=run, size=5, before=branch)
    assert [c.pk for c in rows] == chain[-8:-3] + [branch]

    monkeypatch.setattr(checkpoints_sel, "LINEAGE_WINDOW", 5)
    url = reverse("runs:run_lineage", args=[run.pk])
    body = reviewer_client.get(url).content.decode()
    # The newest checkpoint is the branch (the run's pointer): its ancestors, then their children.
    assert body.count("<circle") == len(checkpoints_sel.lineage_window(project_ids=[project.pk], run=run)[0])
    link = re.search(r'href="\?before=(\d+)" id="lineage-older"', body)
    assert link is not None
    back = reviewer_client.get(f"{url}?before={link[1]}").content.decode()
    assert f'data-checkpoint="{link[1]}"' in back and 'id="lineage-head"' in back

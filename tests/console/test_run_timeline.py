"""A run's timeline on its inspector: resumes, reviewer waits and node executions as bars with durations."""

import datetime as dt
import json
import re

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from runs_app.models import NodeExecution, Run
from tests import factories

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def _events(run: Run, start: dt.datetime, events: list[tuple[float, str, dict]]) -> None:
    """Events at chosen moments (seconds after `start`): the service stamps them with the transaction's
    time, and a test is one transaction. Appending rows is what the service does too."""
    base = max(run.events.values_list("seq", flat=True), default=0) + 1000  # after the service's own
    with connection.cursor() as cursor:
        for seq, (seconds, kind, data) in enumerate(events, start=base + 1):
            cursor.execute("INSERT INTO runs_app_runevent (run_id, seq, kind, data, created_at) "
                           "VALUES (%s, %s, %s, %s::jsonb, %s)",
                           [run.pk, seq, kind, json.dumps(data), start + dt.timedelta(seconds=seconds)])


def _spans(body: str) -> list[tuple[str, str, str, str]]:
    return re.findall(r'<tr class="span-row" data-lane="(\w+)" data-state="(\w+)"><td>\w+</td><td>([^<]*)</td>'
                      r'<td>[^<]*</td><td>([^<]*)</td>', body)


@pytest.fixture
def run(project) -> Run:  # type: ignore[no-untyped-def]
    run = factories.make_run(project, ref="R-t")
    start = timezone.now() - dt.timedelta(minutes=5)
    _events(run, start, [
        (0, "approval.requested", {"approval": 1}),
        (8, "approval.approved", {"approval": 1}),
        (10, "resume.load", {"ok": True}),
        (10, "resume.compatibility", {"ok": True}),
        (12.5, "resume.bind_result", {"ok": False, "reason": "tool unreachable"}),
    ])
    draft = NodeExecution.objects.create(run=run, node="draft", status="succeeded")
    NodeExecution.objects.filter(pk=draft.pk).update(started_at=start + dt.timedelta(seconds=20),
                                                     finished_at=start + dt.timedelta(seconds=23))
    return run


def test_waits_resumes_and_nodes_are_bars_with_their_durations(run, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    body = reviewer_client.get(reverse("runs:run_inspector", args=[run.pk])).content.decode()
    assert _spans(body) == [
        ("approval", "ok", "waiting for a reviewer → approved", "8.0 s"),
        ("resume", "failed", "resume, failed at bind_result", "2.5 s"),
        ("node", "ok", "draft #1", "3.0 s"),
    ]
    assert body.count('<circle class="point') == 6  # run.created and the five above
    assert "5.0 min from first to last moment" in body  # run.created is now, the approval 5 minutes ago
    bars = dict(re.findall(r'data-lane="(\w+)"><rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"', body))
    assert float(bars["approval"]) > float(bars["node"]) > float(bars["resume"]) > 0  # 8 s > 3 s > 2.5 s


def test_the_timeline_filters_by_kind_as_a_fragment(run, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    url = reverse("runs:run_inspector", args=[run.pk])
    body = reviewer_client.get(f"{url}?kind=resume", **HTMX, HTTP_HX_TARGET="timeline").content.decode()
    assert body.lstrip().startswith('<section class="card" id="timeline">')
    assert [lane for lane, *_ in _spans(body)] == ["resume"] and body.count('<circle class="point') == 3
    assert '<option value="resume" selected>' in body
    body = reviewer_client.get(f"{url}?kind=node").content.decode()
    assert [lane for lane, *_ in _spans(body)] == ["node"]
    body = reviewer_client.get(f"{url}?kind=%3Cscript%3E").content.decode()  # not a family name: every kind
    assert len(_spans(body)) == 3 and "<script>" not in body
    _events(run, timezone.now(), [(0, "note", {"text": "an agent's own kind"}), (1, "tool.call", {})])
    body = reviewer_client.get(url).content.decode()
    assert '<option value="note">' in body and '<option value="tool">' in body  # the agent's own families
    body = reviewer_client.get(f"{url}?kind=note").content.decode()
    assert body.count('<circle class="point') == 1 and '<option value="note" selected>' in body


def test_agent_text_in_events_is_shown_as_text(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    run = factories.make_run(project, ref="R-x")
    payload = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    _events(run, timezone.now(), [(0, f"node.{payload}"[:64], {"text": payload}), (1, "resume.load", {"ok": True})])
    body = reviewer_client.get(reverse("runs:run_inspector", args=[run.pk])).content.decode()
    assert "<script>alert" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body

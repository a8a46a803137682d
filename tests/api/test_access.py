"""Every endpoint, four callers: the owner, another project, nobody, and the wrong role.

The table below is the list of operations; `test_the_table_covers_every_operation` fails when an
endpoint is added to the schema without a row here.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.test import Client

from runs_app.models import Checkpoint, Run
from tests.api.conftest import ApiClient, World

READ, WRITE, DECIDE, OPERATE, REVIEW = "read", "write", "decide", "operate", "review"


@dataclass(frozen=True)
class Endpoint:
    operation: str
    method: str
    template: str  # as in the schema
    path: Callable[[World], str]
    body: Callable[[World], Any] = lambda w: None
    owner_status: int = 200
    kind: str = READ
    # A list: another project gets 200 with none of the owner's rows (these ids), not 404.
    listed_ids: Callable[[World], set[int]] | None = None
    # Creates a top-level record in the caller's own project: another project's agent just makes its own.
    own_project_create: bool = False
    params: dict = field(default_factory=dict)
    # What another project's call must answer, when it is neither a 404 nor a paginated list (the thread
    # endpoints: a thread id names a thread of the caller's own project, so another project reads an empty one
    # or writes its own).
    other_check: Callable[[Any, World], None] | None = None


E = Endpoint
ENDPOINTS = [
    E("sessions_list", "GET", "/api/v1/sessions/", lambda w: "/api/v1/sessions/",
      listed_ids=lambda w: {w.session.pk}),
    E("sessions_create", "POST", "/api/v1/sessions/", lambda w: "/api/v1/sessions/",
      lambda w: {"role": "writer", "memory_policy": "session"}, 201, WRITE, own_project_create=True),
    E("sessions_read", "GET", "/api/v1/sessions/{id}/", lambda w: f"/api/v1/sessions/{w.session.pk}/"),
    E("sessions_transition", "POST", "/api/v1/sessions/{id}/transition/",
      lambda w: f"/api/v1/sessions/{w.session.pk}/transition/",
      lambda w: {"to": "running", "expected_version": w.session.version}, 200, WRITE),
    E("session_items_list", "GET", "/api/v1/sessions/{id}/items/", lambda w: f"/api/v1/sessions/{w.session.pk}/items/"),
    E("session_items_append", "POST", "/api/v1/sessions/{id}/items/",
      lambda w: f"/api/v1/sessions/{w.session.pk}/items/",
      lambda w: {"items": [{"role": "user", "content": "hello"}]}, 201, WRITE),
    E("session_items_latest", "GET", "/api/v1/sessions/{id}/items/latest/",
      lambda w: f"/api/v1/sessions/{w.session.pk}/items/latest/"),
    E("session_items_pop", "POST", "/api/v1/sessions/{id}/items/pop/",
      lambda w: f"/api/v1/sessions/{w.session.pk}/items/pop/", lambda w: {}, 200, WRITE),
    E("session_items_clear", "POST", "/api/v1/sessions/{id}/items/clear/",
      lambda w: f"/api/v1/sessions/{w.session.pk}/items/clear/", lambda w: {}, 200, WRITE),
    E("session_items_trim", "POST", "/api/v1/sessions/{id}/items/trim/",
      lambda w: f"/api/v1/sessions/{w.session.pk}/items/trim/", lambda w: {"keep_last": 5}, 200, WRITE),
    E("session_items_compact", "POST", "/api/v1/sessions/{id}/items/compact/",
      lambda w: f"/api/v1/sessions/{w.session.pk}/items/compact/",
      # The world's session has no items: the owner reaches the service, which finds the range empty.
      lambda w: {"first_seq": 1, "last_seq": 2**40, "summary": {"content": "s"}}, 409, WRITE),
    # A token narrowed to one end user (tests/api/test_narrowed_tokens.py): another project's agent mints its own.
    E("tokens_narrow", "POST", "/api/v1/tokens/narrow/", lambda w: "/api/v1/tokens/narrow/",
      lambda w: {"end_user": "u-1"}, 201, WRITE, other_check=lambda r, w: _minted_for_its_own_project(r, w)),
    E("runs_list", "GET", "/api/v1/runs/", lambda w: "/api/v1/runs/",
      listed_ids=lambda w: {w.run.pk, w.running_run.pk, w.waiting_run.pk}),
    E("runs_create", "POST", "/api/v1/runs/", lambda w: "/api/v1/runs/",
      lambda w: {"session": w.session.pk, "task": w.task.pk}, 201, WRITE),
    E("runs_read", "GET", "/api/v1/runs/{id}/", lambda w: f"/api/v1/runs/{w.run.pk}/"),
    E("runs_claim", "POST", "/api/v1/runs/{id}/claim/", lambda w: f"/api/v1/runs/{w.running_run.pk}/claim/",
      lambda w: {"owner": "worker-2", "lease_seconds": 30}, 200, WRITE),
    E("runs_heartbeat", "POST", "/api/v1/runs/{id}/heartbeat/", lambda w: f"/api/v1/runs/{w.run.pk}/heartbeat/",
      lambda w: {"owner": w.run.lease_owner, "lease_seconds": 30}, 200, WRITE),
    E("runs_transition", "POST", "/api/v1/runs/{id}/transition/", lambda w: f"/api/v1/runs/{w.run.pk}/transition/",
      lambda w: {"to": "running", "expected_version": w.run.version, "lease_owner": w.run.lease_owner}, 200, WRITE),
    E("runs_usage_report", "POST", "/api/v1/runs/{id}/usage/", lambda w: f"/api/v1/runs/{w.running_run.pk}/usage/",
      lambda w: {"tokens": 120, "cost": "0.0030", "model": "m-1", "lease_owner": w.running_run.lease_owner or None},
      200, WRITE),
    E("run_events_list", "GET", "/api/v1/runs/{id}/events/", lambda w: f"/api/v1/runs/{w.run.pk}/events/"),
    E("run_events_append", "POST", "/api/v1/runs/{id}/events/", lambda w: f"/api/v1/runs/{w.run.pk}/events/",
      lambda w: {"kind": "tool.called", "data": {"tool": "search"}, "lease_owner": w.run.lease_owner}, 201, WRITE),
    E("approvals_request", "POST", "/api/v1/runs/{id}/approvals/",
      lambda w: f"/api/v1/runs/{w.running_run.pk}/approvals/",
      lambda w: {"tool": "delete_branch", "arguments": {"name": "x"}, "idempotency_key": "del-x",
                 "lease_owner": w.running_run.lease_owner or None}, 201, WRITE),
    E("checkpoints_list", "GET", "/api/v1/checkpoints/", lambda w: f"/api/v1/checkpoints/?run={w.run.pk}",
      listed_ids=lambda w: {w.checkpoint.pk}),
    E("checkpoints_create", "POST", "/api/v1/checkpoints/", lambda w: "/api/v1/checkpoints/",
      lambda w: {"run": w.run.pk, "parent": w.checkpoint.pk, "cursor": {"node": "draft"},
                 "lease_owner": w.run.lease_owner}, 201, WRITE),
    E("checkpoints_read", "GET", "/api/v1/checkpoints/{id}/", lambda w: f"/api/v1/checkpoints/{w.checkpoint.pk}/"),
    E("checkpoints_lineage", "GET", "/api/v1/checkpoints/{id}/lineage/",
      lambda w: f"/api/v1/checkpoints/{w.checkpoint.pk}/lineage/"),
    E("checkpoints_fork", "POST", "/api/v1/checkpoints/{id}/fork/",
      lambda w: f"/api/v1/checkpoints/{w.checkpoint.pk}/fork/", lambda w: {"reason": "try again"}, 201, WRITE),
    E("approvals_list", "GET", "/api/v1/approvals/", lambda w: "/api/v1/approvals/",
      listed_ids=lambda w: {w.approval.pk}),
    E("approvals_read", "GET", "/api/v1/approvals/{id}/", lambda w: f"/api/v1/approvals/{w.approval.pk}/"),
    E("approvals_decide", "POST", "/api/v1/approvals/{id}/decision/",
      lambda w: f"/api/v1/approvals/{w.approval.pk}/decision/",
      lambda w: {"decision": "approve", "expected_version": w.approval.version}, 200, DECIDE),
    E("effects_list", "GET", "/api/v1/effects/", lambda w: "/api/v1/effects/", listed_ids=lambda w: {w.effect.pk}),
    E("effects_intend", "POST", "/api/v1/effects/", lambda w: "/api/v1/effects/",
      lambda w: {"idempotency_key": "pub-2", "tool": "publish", "run": w.running_run.pk}, 201, WRITE),
    E("effects_read", "GET", "/api/v1/effects/{id}/", lambda w: f"/api/v1/effects/{w.effect.pk}/"),
    E("effects_deliver", "POST", "/api/v1/effects/deliver/", lambda w: "/api/v1/effects/deliver/",
      lambda w: {"idempotency_key": w.effect.idempotency_key, "result": {"url": "https://x"}}, 200, WRITE),
    E("tasks_list", "GET", "/api/v1/tasks/", lambda w: "/api/v1/tasks/", listed_ids=lambda w: {w.task.pk}),
    E("tasks_create", "POST", "/api/v1/tasks/", lambda w: "/api/v1/tasks/",
      lambda w: {"objective": "Write chapter 4", "plan": ["outline"]}, 201, WRITE, own_project_create=True),
    E("tasks_read", "GET", "/api/v1/tasks/{id}/", lambda w: f"/api/v1/tasks/{w.task.pk}/"),
    E("tasks_save", "PATCH", "/api/v1/tasks/{id}/", lambda w: f"/api/v1/tasks/{w.task.pk}/",
      lambda w: {"expected_version": w.task.version, "completed_nodes": ["outline"]}, 200, WRITE),
    E("tasks_transition", "POST", "/api/v1/tasks/{id}/transition/",
      lambda w: f"/api/v1/tasks/{w.task.pk}/transition/",
      lambda w: {"to": "active", "expected_version": w.task.version}, 200, WRITE),
    E("retention_read", "GET", "/api/v1/projects/{id}/retention/",
      lambda w: f"/api/v1/projects/{w.project.pk}/retention/"),
    E("retention_set", "PUT", "/api/v1/projects/{id}/retention/",
      lambda w: f"/api/v1/projects/{w.project.pk}/retention/", lambda w: {"events_keep_last": 100}, 200, OPERATE),
    E("retention_dry_run", "GET", "/api/v1/projects/{id}/retention/dry-run/",
      lambda w: f"/api/v1/projects/{w.project.pk}/retention/dry-run/"),
]


# --- LangGraph threads (runs_app.api.threads) ----------------------------------------------------------------

def _minted_for_its_own_project(response: Any, w: World) -> None:
    from harness.models import ApiToken

    assert response.status_code == 201, response.content
    assert ApiToken.objects.get(pk=response.json()["id"]).project_id != w.project.pk


def _thread(w: World) -> str:
    """The owner's thread `t-1`, with its checkpoint `c1` and a pending write."""
    from runs_app.models import CheckpointWrite
    from runs_app.services import thread_checkpoint_put, thread_writes_put

    if not Checkpoint.objects.filter(project=w.project, run__ref="t-1").exists():
        thread_checkpoint_put(project=w.project, thread_id="t-1", checkpoint_ns="", checkpoint_id="c1",
                              parent_checkpoint_id=None, checkpoint={"v": 4}, channel_values={"a": 1},
                              metadata={"step": 0, "run_id": "lg-run-1"})
        thread_writes_put(project=w.project, thread_id="t-1", checkpoint_ns="", checkpoint_id="c1",
                          task_id="task", task_path="", writes=[(0, "a", 2)])
    assert CheckpointWrite.objects.filter(project=w.project).exists()
    return "t-1"


def _thread_intact(w: World) -> None:
    assert list(Checkpoint.objects.filter(project=w.project, run__ref="t-1").values_list("external_id", flat=True)
                ) == ["c1"]


def _other_reads_nothing(response: Any, w: World) -> None:
    assert response.status_code == 200 and response.json() == []


def _other_finds_no_checkpoint(response: Any, w: World) -> None:
    assert response.status_code == 404 and response.json()["code"] == "checkpoint_not_found"


def _other_finds_no_thread(response: Any, w: World) -> None:
    assert response.status_code == 404 and response.json()["code"] == "thread_not_found", response.content
    _thread_intact(w)
    assert Run.objects.get(project=w.project, ref="t-1").thread_ttl_days is None


def _other_prunes_nothing(response: Any, w: World) -> None:
    assert response.status_code == 200 and response.json() == {"checkpoints": 0, "writes": 0, "kept": []}
    _thread_intact(w)


def _other_writes_its_own_thread(response: Any, w: World) -> None:
    assert response.status_code in (200, 201), response.content
    _thread_intact(w)
    if "run" in response.json():
        assert Run.objects.get(pk=response.json()["run"]).project_id != w.project.pk


THREAD_ENDPOINTS = [
    E("threads_ensure", "POST", "/api/v1/threads/", lambda w: _thread(w) and "/api/v1/threads/",
      lambda w: {"thread_id": "t-new"},
      200, WRITE, other_check=_other_writes_its_own_thread),
    E("threads_checkpoints_list", "GET", "/api/v1/threads/checkpoints/",
      lambda w: f"/api/v1/threads/checkpoints/?thread_id={_thread(w)}", other_check=_other_reads_nothing),
    E("threads_checkpoints_put", "POST", "/api/v1/threads/checkpoints/", lambda w: "/api/v1/threads/checkpoints/",
      lambda w: {"thread_id": _thread(w), "checkpoint_id": "c2", "parent_checkpoint_id": "c1",
                 "checkpoint": {"v": 4}, "channel_values": {"a": 3}, "metadata": {"step": 1}},
      201, WRITE, other_check=_other_writes_its_own_thread),
    E("threads_checkpoint_read", "GET", "/api/v1/threads/checkpoint/",
      lambda w: f"/api/v1/threads/checkpoint/?thread_id={_thread(w)}", other_check=_other_finds_no_checkpoint),
    E("threads_writes_put", "POST", "/api/v1/threads/writes/", lambda w: "/api/v1/threads/writes/",
      lambda w: {"thread_id": _thread(w), "checkpoint_id": "c1", "task_id": "task-2", "writes": [[0, "a", 4]]},
      201, WRITE, other_check=_other_writes_its_own_thread),
    E("threads_delete", "POST", "/api/v1/threads/delete/", lambda w: "/api/v1/threads/delete/",
      lambda w: {"thread_id": _thread(w)}, 200, WRITE, other_check=_other_writes_its_own_thread),
    E("threads_copy", "POST", "/api/v1/threads/copy/", lambda w: "/api/v1/threads/copy/",
      lambda w: {"source_thread_id": _thread(w), "target_thread_id": "t-copy"}, 201, WRITE,
      other_check=_other_finds_no_thread),
    E("threads_prune", "POST", "/api/v1/threads/prune/", lambda w: "/api/v1/threads/prune/",
      lambda w: {"thread_ids": [_thread(w)], "strategy": "delete"}, 200, WRITE, other_check=_other_prunes_nothing),
    E("threads_delete_for_runs", "POST", "/api/v1/threads/delete-for-runs/",
      lambda w: _thread(w) and "/api/v1/threads/delete-for-runs/", lambda w: {"run_ids": ["lg-run-1"]}, 200, WRITE,
      other_check=_other_prunes_nothing),
    E("threads_ttl_read", "GET", "/api/v1/threads/ttl/", lambda w: f"/api/v1/threads/ttl/?thread_id={_thread(w)}",
      other_check=_other_finds_no_thread),
    E("threads_ttl_set", "POST", "/api/v1/threads/ttl/", lambda w: "/api/v1/threads/ttl/",
      lambda w: {"thread_id": _thread(w), "ttl_days": 7}, 200, WRITE, other_check=_other_finds_no_thread),
]


# --- handoffs (runs_app.api.handoffs) ---------------------------------------------------------------------

def _handoff(w: World, status: str = "issued") -> Any:
    """A handoff of the owner's project, issued (or accepted by a run of its receiver session), made once per
    world and status: the path's lambda makes it, the body's reads it."""
    import datetime as dt

    from django.utils import timezone

    from harness.actors import Actor
    from runs_app.services import handoff_accept, handoff_issue, run_transition
    from tests import factories

    made = w.__dict__.setdefault("handoffs", {})
    if status not in made:
        origin = factories.make_run(w.project, w.session)
        run_transition(project=w.project, run_id=origin.pk, to="running", expected_version=None)
        receiver = factories.make_session(w.project, role="semantic_reviewer", memory_policy="none")
        handoff = handoff_issue(project=w.project, origin_run_id=origin.pk, receiver_session_id=receiver.pk,
                                objective="Review chapter 3.", inputs=[], allowed_capabilities=[],
                                output_schema={"type": "object"}, deadline=timezone.now() + dt.timedelta(hours=1),
                                actor=Actor.for_agent("seed"))
        if status == "accepted":
            handoff = handoff_accept(project=w.project, handoff_id=handoff.pk,
                                     receiver_run_id=factories.make_run(w.project, receiver).pk,
                                     actor=Actor.for_agent("seed"))
        made[status] = handoff
    return made[status]


def _listed_handoffs(w: World) -> set[int]:
    from runs_app.models import Handoff

    return set(Handoff.objects.filter(project=w.project).values_list("pk", flat=True))


HANDOFF_ENDPOINTS = [
    E("handoffs_issue", "POST", "/api/v1/runs/{id}/handoffs/",
      lambda w: f"/api/v1/runs/{w.running_run.pk}/handoffs/",
      lambda w: {"receiver_session": w.session.pk, "objective": "Review.", "output_schema": {"type": "object"},
                 "deadline": _soon(), "lease_owner": w.running_run.lease_owner or None}, 201, WRITE),
    E("handoffs_list", "GET", "/api/v1/handoffs/", lambda w: _handoff(w) and "/api/v1/handoffs/",
      listed_ids=_listed_handoffs),
    E("handoffs_read", "GET", "/api/v1/handoffs/{id}/", lambda w: f"/api/v1/handoffs/{_handoff(w).pk}/"),
    E("handoffs_accept", "POST", "/api/v1/handoffs/{id}/accept/",
      lambda w: f"/api/v1/handoffs/{_handoff(w).pk}/accept/",
      lambda w: {"run": _receiver_run(w), "expected_version": _handoff(w).version}, 200, WRITE),
    E("handoffs_return", "POST", "/api/v1/handoffs/{id}/return/",
      lambda w: f"/api/v1/handoffs/{_handoff(w, 'accepted').pk}/return/",
      lambda w: {"packet_fingerprint": _handoff(w, "accepted").packet_fingerprint, "result": {"ok": True},
                 "expected_version": _handoff(w, "accepted").version},
      200, WRITE),
    E("handoffs_cancel", "POST", "/api/v1/handoffs/{id}/cancel/",
      lambda w: f"/api/v1/handoffs/{_handoff(w).pk}/cancel/",
      lambda w: {"reason": "Not needed.", "expected_version": _handoff(w).version},
      200, WRITE),
]


def _soon() -> str:
    import datetime as dt

    from django.utils import timezone

    return (timezone.now() + dt.timedelta(hours=1)).isoformat()


def _receiver_run(w: World) -> int:
    from tests import factories

    return factories.make_run(w.project, _handoff(w).receiver_session).pk


# --- webhooks (notify_app.api) ---------------------------------------------------------------------------

def _webhook(w: World) -> Any:
    from harness.actors import Actor
    from notify_app.services import webhook_register

    if "webhook" not in w.__dict__:
        w.__dict__["webhook"] = webhook_register(project=w.project, url="https://hooks.example.com/h",
                                                 events=["run.status_changed"], actor=Actor.for_agent("seed"))
    return w.__dict__["webhook"]


def _agent_approved(w: World) -> Any:
    """An approval the agent runs itself, approved by the world's reviewer: the one kind with an outcome to report."""
    from harness.actors import Actor
    from runs_app.services import approval_request_create

    if "agent_approved" not in w.__dict__:
        approval = approval_request_create(project=w.project, run_id=w.running_run.pk, tool="send_email",
                                           arguments={"to": "b@example.com"}, executor="agent",
                                           idempotency_key=f"agent-{w.running_run.pk}", actor=Actor.for_agent("seed"))
        decided = w.reviewer.post(f"/api/v1/approvals/{approval.pk}/decision/",
                                  {"decision": "approve", "expected_version": approval.version})
        assert decided.status_code == 200, decided.content
        w.__dict__["agent_approved"] = approval
    return w.__dict__["agent_approved"]


OUTCOME_ENDPOINTS = [
    E("approvals_report_outcome", "POST", "/api/v1/approvals/{id}/outcome/",
      lambda w: f"/api/v1/approvals/{_agent_approved(w).pk}/outcome/", lambda w: {"outcome": "ran"}, 200, WRITE),
]

WEBHOOK_ENDPOINTS = [
    E("webhooks_list", "GET", "/api/v1/webhooks/", lambda w: _webhook(w) and "/api/v1/webhooks/",
      listed_ids=lambda w: {_webhook(w).pk}),
    E("webhooks_register", "POST", "/api/v1/webhooks/", lambda w: "/api/v1/webhooks/",
      lambda w: {"url": "https://hooks.example.com/new", "events": ["approval.decided"]}, 201, WRITE,
      own_project_create=True),
    E("webhooks_deactivate", "POST", "/api/v1/webhooks/{id}/deactivate/",
      lambda w: f"/api/v1/webhooks/{_webhook(w).pk}/deactivate/", lambda w: {}, 200, WRITE),
]

def _tool_schema(w: World) -> Any:
    from harness.actors import Actor
    from runs_app.services import tool_schema_register

    if "tool_schema" not in w.__dict__:
        w.__dict__["tool_schema"] = tool_schema_register(project=w.project, tool="seeded", schema={"type": "object"},
                                                         actor=Actor.for_agent("seed"))[0]
    return w.__dict__["tool_schema"]


TOOL_SCHEMA_ENDPOINTS = [
    E("tool_schemas_list", "GET", "/api/v1/tools/schemas/", lambda w: _tool_schema(w) and "/api/v1/tools/schemas/",
      listed_ids=lambda w: {_tool_schema(w).pk}),
    E("tool_schemas_register", "POST", "/api/v1/tools/schemas/", lambda w: "/api/v1/tools/schemas/",
      lambda w: {"tool": "new_tool", "schema": {"type": "object"}}, 201, WRITE, own_project_create=True),
    E("tool_schemas_read", "GET", "/api/v1/tools/schemas/{id}/",
      lambda w: f"/api/v1/tools/schemas/{_tool_schema(w).pk}/"),
]



def _policy(w: World) -> Any:
    """A published policy and a reviewer group of the world's project (made once per world)."""
    if "policy" not in w.__dict__:
        from harness.actors import Actor
        from runs_app.models import ReviewerGroup
        from runs_app.services.approval_policies import approval_policy_publish
        from tests import factories

        w.__dict__["group"] = ReviewerGroup.objects.create(project=w.project, name="seeded")
        admin = factories.make_user(f"policy-admin-{w.project.slug}", role="admin", projects=[w.project])
        w.__dict__["policy"] = approval_policy_publish(project=w.project, tool="seeded", actor=Actor.for_user(admin))
    return w.__dict__["policy"]


POLICY_ENDPOINTS = [
    E("approval_policies_list", "GET", "/api/v1/approval-policies/",
      lambda w: _policy(w) and "/api/v1/approval-policies/", listed_ids=lambda w: {_policy(w).pk}),
    E("approval_policies_publish", "POST", "/api/v1/approval-policies/", lambda w: "/api/v1/approval-policies/",
      lambda w: {"project": w.project.slug, "tool": "new_tool", "required_approvals": 2}, 201, OPERATE),
    E("reviewer_groups_list", "GET", "/api/v1/reviewer-groups/",
      lambda w: _policy(w) and "/api/v1/reviewer-groups/", listed_ids=lambda w: {w.__dict__["group"].pk}),
]



def _rule(w: World) -> Any:
    """A standing approval of the world's project, by a reviewer of it (made once per world)."""
    if "rule" not in w.__dict__:
        import datetime as dt

        from harness.actors import Actor
        from runs_app.services.standing_approvals import standing_approval_create
        from tests import factories

        author = factories.make_user(f"rule-author-{w.project.slug}", role="reviewer", projects=[w.project])
        w.__dict__["rule"] = standing_approval_create(project=w.project, actor=Actor.for_user(author), tool="seeded",
                                                      max_uses=3, expires_in=dt.timedelta(hours=1))
    return w.__dict__["rule"]


STANDING_APPROVAL_ENDPOINTS = [
    E("standing_approvals_list", "GET", "/api/v1/standing-approvals/",
      lambda w: _rule(w) and "/api/v1/standing-approvals/", listed_ids=lambda w: {_rule(w).pk}),
    E("standing_approvals_create", "POST", "/api/v1/standing-approvals/", lambda w: "/api/v1/standing-approvals/",
      lambda w: {"project": w.project.slug, "tool": "publish", "max_uses": 2, "expires_in": "01:00:00"}, 201, REVIEW),
    E("standing_approvals_read", "GET", "/api/v1/standing-approvals/{id}/",
      lambda w: f"/api/v1/standing-approvals/{_rule(w).pk}/"),
    E("standing_approvals_revoke", "POST", "/api/v1/standing-approvals/{id}/revoke/",
      lambda w: f"/api/v1/standing-approvals/{_rule(w).pk}/revoke/", lambda w: {}, 200, REVIEW),
]

def _question(w: World) -> Any:
    """A pending question of the world's project, asked by the world's agent (made once per world)."""
    if "question" not in w.__dict__:
        from harness.actors import Actor
        from runs_app.services.questions import question_ask

        w.__dict__["question"] = question_ask(project=w.project, actor=Actor.for_agent(f"{w.project.slug}-agent"),
                                              question="Which cover?", idempotency_key="q-seeded",
                                              answer_schema={"type": "string", "enum": ["blue", "red"]})
    return w.__dict__["question"]


QUESTION_ENDPOINTS = [
    E("questions_list", "GET", "/api/v1/questions/", lambda w: _question(w) and "/api/v1/questions/",
      listed_ids=lambda w: {_question(w).pk}),
    E("questions_ask", "POST", "/api/v1/questions/", lambda w: "/api/v1/questions/",
      lambda w: {"question": "Which title?", "idempotency_key": "q-new"}, 201, WRITE, own_project_create=True),
    E("questions_read", "GET", "/api/v1/questions/{id}/", lambda w: f"/api/v1/questions/{_question(w).pk}/"),
    E("questions_answer", "POST", "/api/v1/questions/{id}/answer/",
      lambda w: f"/api/v1/questions/{_question(w).pk}/answer/", lambda w: {"answer": "blue"}, 200, DECIDE),
    E("questions_cancel", "POST", "/api/v1/questions/{id}/cancel/",
      lambda w: f"/api/v1/questions/{_question(w).pk}/cancel/", lambda w: {}, 200, WRITE),
]

def _bundle(w: World) -> Any:
    """A bundle of a bare run of the world's project (its own session, no refs), exported once per world: importing
    it back into the project collides with nothing."""
    if "bundle" not in w.__dict__:
        from bundles_app.services import bundle_export
        from harness.actors import Actor
        from tests import factories

        run = factories.make_run(w.project, factories.make_session(w.project))
        admin = factories.make_user(f"bundle-admin-{w.project.slug}", role="admin", projects=[w.project])
        w.__dict__["bundle"] = bundle_export(project=w.project, actor=Actor.for_user(admin), kind="run",
                                             root_id=run.pk)
    return w.__dict__["bundle"]


BUNDLE_ENDPOINTS = [
    E("bundle_export", "POST", "/api/v1/bundles/export/", lambda w: "/api/v1/bundles/export/",
      lambda w: {"kind": "run", "id": w.run.pk}, 200, OPERATE),
    E("bundle_import", "POST", "/api/v1/bundles/import/", lambda w: "/api/v1/bundles/import/",
      lambda w: {"project": w.project.slug, "bundle": _bundle(w)}, 201, OPERATE),
]

ENDPOINTS += (QUESTION_ENDPOINTS + THREAD_ENDPOINTS + HANDOFF_ENDPOINTS + WEBHOOK_ENDPOINTS + OUTCOME_ENDPOINTS
              + TOOL_SCHEMA_ENDPOINTS
              + POLICY_ENDPOINTS + STANDING_APPROVAL_ENDPOINTS + BUNDLE_ENDPOINTS)
IDS = [e.operation for e in ENDPOINTS]


def _call(client: ApiClient, endpoint: Endpoint, world: World) -> Any:
    world.run.refresh_from_db()
    world.task.refresh_from_db()
    world.session.refresh_from_db()
    return client.call(endpoint.method, endpoint.path(world), endpoint.body(world))


def _owner(world: World, endpoint: Endpoint) -> ApiClient:
    return {DECIDE: world.reviewer, OPERATE: world.operator, REVIEW: world.reviewer}.get(endpoint.kind, world.agent)


@pytest.mark.django_db
def test_the_table_covers_every_operation() -> None:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = {
        (method.upper(), path)
        for path, ops in schema["paths"].items()
        if path.startswith("/api/v1/") and not path.startswith("/api/v1/memory/")
        for method in ops
        if method in ("get", "post", "put", "patch", "delete")
    }
    assert operations == {(e.method, e.template) for e in ENDPOINTS}


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=IDS)
def test_owner_succeeds(endpoint: Endpoint, world: World) -> None:
    response = _call(_owner(world, endpoint), endpoint, world)
    assert response.status_code == endpoint.owner_status, response.content


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=IDS)
def test_other_project_sees_nothing(endpoint: Endpoint, world: World, other_world: World) -> None:
    response = _call(_owner(other_world, endpoint), endpoint, world)
    if endpoint.other_check is not None:
        endpoint.other_check(response, world)
    elif endpoint.listed_ids is not None:
        assert response.status_code == 200
        ids = {row["id"] for row in response.json()["results"]}
        assert not ids & endpoint.listed_ids(world)
    elif endpoint.own_project_create:
        assert response.status_code == 201
        assert response.json()["project"] == other_world.project.slug
    else:
        assert response.status_code == 404, response.content
        assert response.json()["code"] == "not_found"
        assert set(response.json()) == {"code", "detail"}  # nothing of the record itself


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=IDS)
def test_anonymous_is_401(endpoint: Endpoint, world: World) -> None:
    response = _call(ApiClient(), endpoint, world)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=IDS)
def test_wrong_role_is_403(endpoint: Endpoint, world: World) -> None:
    """Writes need a writing agent token, reads a token or a role, decisions a reviewer (never an agent)."""
    wrong, code = {
        READ: (world.roleless, "role_required"),
        WRITE: (world.reader, "token_read_only"),
        DECIDE: (world.agent, "agent_cannot_decide"),
        OPERATE: (world.agent, "not_an_operator"),
        REVIEW: (world.agent, "not_a_person"),
    }[endpoint.kind]
    response = _call(wrong, endpoint, world)
    assert response.status_code == 403, response.content
    assert response.json()["code"] == code


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS if e.kind == WRITE], ids=lambda e: e.operation)
def test_console_users_do_not_write_as_agents(endpoint: Endpoint, world: World) -> None:
    response = _call(world.reviewer, endpoint, world)
    assert response.status_code == 403
    assert response.json()["code"] == "agent_token_required"


@pytest.mark.django_db
def test_a_reviewer_reads_their_projects_runs_but_not_others(world: World, other_world: World) -> None:
    assert world.reviewer.get(f"/api/v1/runs/{world.run.pk}/").status_code == 200
    assert world.reviewer.get(f"/api/v1/runs/{other_world.run.pk}/").status_code == 404


@pytest.mark.django_db
def test_a_member_without_the_reviewer_role_cannot_decide(world: World) -> None:
    from tests import factories

    operator = factories.make_user("op", role="operator", projects=[world.project])
    client = ApiClient(factories.make_personal_token(operator)[1])
    response = client.post(f"/api/v1/approvals/{world.approval.pk}/decision/",
                           {"decision": "approve", "expected_version": world.approval.version})
    assert response.status_code == 403
    assert response.json()["code"] == "not_a_reviewer"


@pytest.mark.django_db
def test_a_reviewer_decides_through_the_login_session_too(world: World) -> None:
    from tests import factories

    user = factories.make_user("rev-session", role="reviewer", projects=[world.project])
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    browser.get("/api/v1/approvals/")  # no CSRF cookie needed to read
    token = "a" * 32
    browser.cookies["csrftoken"] = token
    response = browser.post(
        f"/api/v1/approvals/{world.approval.pk}/decision/", {"decision": "reject", "reason": "Too risky",
                                                             "expected_version": world.approval.version},
        content_type="application/json", HTTP_X_CSRFTOKEN=token,
    )
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "rejected"
    assert response.json()["decided_by"] == "rev-session"


@pytest.mark.django_db
def test_a_revoked_token_is_401(world: World) -> None:
    from django.utils import timezone

    from harness.models import ApiToken

    ApiToken.objects.filter(name="acme-agent").update(revoked_at=timezone.now())
    response = world.agent.get("/api/v1/runs/")
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


# --- a handoff receiver's credential ----------------------------------------------------------------------

_RECEIVER_OWN_KIND = {"handoffs_read", "handoffs_accept", "handoffs_return"}


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=IDS)
def test_a_handoff_receivers_token_reaches_nothing_but_its_own_handoff(endpoint: Endpoint, world: World) -> None:
    """The token a handoff's issue hands its receiver (for a handoff of its own, not the table's): every other
    operation refuses it (403), and the three it may call find no other handoff (404)."""
    from tests.api.test_handoff_receiver import issue_with_receiver

    _, secret = issue_with_receiver(world)
    response = _call(ApiClient(secret), endpoint, world)
    if endpoint.operation in _RECEIVER_OWN_KIND:
        assert (response.status_code, response.json()["code"]) == (404, "not_found"), response.content
    else:
        expected = "agent_cannot_decide" if endpoint.kind == DECIDE else "receiver_token_scope"
        assert (response.status_code, response.json()["code"]) == (403, expected), response.content


# --- the LangGraph store on memory (memory_app.api, harness_client.langgraph_store) ----------------------------
# Memory's operations answer memory's own access codes (memory_app.api.MemoryAccess: a person must be an
# operator), so they are listed here, with their own four callers, rather than in ENDPOINTS.

_STORE_NS = "namespace=project&namespace=access"


def _store_item(w: World) -> str:
    """The owner's item ("project", "access") / "k" (made once per world)."""
    from harness.actors import Actor
    from memory_app.services import memory_put

    if "store_item" not in w.__dict__:
        w.__dict__["store_item"] = memory_put(project=w.project, actor=Actor.for_agent(f"{w.project.slug}-agent"),
                                              namespace=["project", "access"], key="k", value={"v": 1},
                                              graph={"thread_id": "t-access"}).record
    return "k"


def _store_other_reads_nothing(response: Any, w: World) -> None:
    assert response.status_code == 200 and response.json() == [], response.content


def _store_other_lists_nothing(response: Any, w: World) -> None:
    assert response.status_code == 200 and response.json() == {"namespaces": []}, response.content


def _store_other_writes_its_own(response: Any, w: World) -> None:
    from memory_app.models import MemoryRecord

    assert response.status_code in (200, 201), response.content
    assert MemoryRecord.objects.get(project=w.project, key="k").status == "active"  # the owner's item is untouched
    if "record" in response.json():
        assert MemoryRecord.objects.get(pk=response.json()["record"]["id"]).project_id != w.project.pk


STORE_ENDPOINTS = [
    E("memory_store_get", "GET", "/api/v1/memory/store/items/",
      lambda w: f"/api/v1/memory/store/items/?{_STORE_NS}&key={_store_item(w)}"),
    E("memory_store_put", "POST", "/api/v1/memory/store/items/",
      lambda w: _store_item(w) and "/api/v1/memory/store/items/",
      lambda w: {"namespace": ["project", "access"], "key": "k", "value": {"v": 2}, "graph": {"thread_id": "t"}},
      201, WRITE, other_check=_store_other_writes_its_own),
    E("memory_store_delete", "POST", "/api/v1/memory/store/items/delete/",
      lambda w: _store_item(w) and "/api/v1/memory/store/items/delete/",
      lambda w: {"namespace": ["project", "access"], "key": "k"}, 200, WRITE,
      other_check=_store_other_writes_its_own),
    E("memory_store_search", "GET", "/api/v1/memory/store/search/",
      lambda w: _store_item(w) and "/api/v1/memory/store/search/?namespace_prefix=project",
      other_check=_store_other_reads_nothing),
    E("memory_store_namespaces", "GET", "/api/v1/memory/store/namespaces/",
      lambda w: _store_item(w) and "/api/v1/memory/store/namespaces/", other_check=_store_other_lists_nothing),
]
STORE_IDS = [e.operation for e in STORE_ENDPOINTS]


@pytest.mark.django_db
def test_the_store_table_covers_every_store_operation() -> None:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = {
        (method.upper(), path) for path, ops in schema["paths"].items() if path.startswith("/api/v1/memory/store/")
        for method in ops if method in ("get", "post", "put", "patch", "delete")
    }
    assert operations == {(e.method, e.template) for e in STORE_ENDPOINTS}


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", STORE_ENDPOINTS, ids=STORE_IDS)
def test_store_owner_succeeds(endpoint: Endpoint, world: World) -> None:
    response = _call(world.agent, endpoint, world)
    assert response.status_code == endpoint.owner_status, response.content


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", STORE_ENDPOINTS, ids=STORE_IDS)
def test_store_other_project_sees_nothing(endpoint: Endpoint, world: World, other_world: World) -> None:
    response = _call(other_world.agent, endpoint, world)
    if endpoint.other_check is not None:
        endpoint.other_check(response, world)
    else:
        assert response.status_code == 404, response.content
        assert set(response.json()) == {"code", "detail"}


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", STORE_ENDPOINTS, ids=STORE_IDS)
def test_store_anonymous_is_401(endpoint: Endpoint, world: World) -> None:
    response = _call(ApiClient(), endpoint, world)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", STORE_ENDPOINTS, ids=STORE_IDS)
def test_store_wrong_role_is_403(endpoint: Endpoint, world: World) -> None:
    """A read-only token only reads; a person who is not an operator reaches no memory (the reviewer too)."""
    callers = [(world.roleless, "not_an_operator"), (world.reviewer, "not_an_operator")]
    if endpoint.kind == WRITE:
        callers.append((world.reader, "token_read_only"))
    for wrong, code in callers:
        response = _call(wrong, endpoint, world)
        assert (response.status_code, response.json()["code"]) == (403, code), response.content


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", STORE_ENDPOINTS, ids=STORE_IDS)
def test_store_refuses_a_handoff_receivers_token(endpoint: Endpoint, world: World) -> None:
    from tests.api.test_handoff_receiver import issue_with_receiver

    _, secret = issue_with_receiver(world)
    response = _call(ApiClient(secret), endpoint, world)
    assert (response.status_code, response.json()["code"]) == (403, "receiver_token_scope"), response.content

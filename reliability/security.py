"""Security experiments 9-14 and 16 of issue 7: decisions, tampering, tenancy, console, limits, schema, audit.

Each experiment builds its own project (a fresh slug), so the quick form runs inside pytest-django
(transactional database: threads and subprocesses see committed rows) and the full form runs
against bin/reliability's own database without colliding with earlier runs. Nothing here sends a
resume message to Celery: approvals are resumed in-process with `worker.pipeline.resume_run_by_id`
and the approved tool is a Python adapter that counts its calls (`sec_tool`).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.db import connection, transaction
from django.test import Client, override_settings

from harness.actors import Actor
from harness.canonical import action_fingerprint, digest
from harness.http.errors import ConflictError
from harness.models import AuditEntry, Project
from reliability.core import Result, command_for, experiment
from runs_app.artifacts import artifact_fingerprints
from runs_app.models import ApprovalRequest, ApprovalStatus, Run, RunStatus
from runs_app.services import approval_decide, approval_request_create, checkpoint_create, run_transition
from sessions_app.models import Session
from tests import factories
from tests.threads import run_concurrently
from worker.pipeline import resume_run_by_id

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts" / "reliability"
TOOL = "sec_tool"
ADAPTERS = {TOOL: {"kind": "python", "callable": "reliability.security.sec_tool"}}

# Every call the approved tool receives: (idempotency key, digest of the arguments it executed).
CALLS: list[tuple[str, str]] = []
_CALLS_LOCK = threading.Lock()


def sec_tool(arguments: Any, *, idempotency_key: str) -> dict:
    """The tool adapter of these experiments: records what it executed, under which key."""
    with _CALLS_LOCK:
        CALLS.append((idempotency_key, digest(arguments)))
    return {"ok": True, "arguments_digest": digest(arguments)}


def calls_for(key: str) -> list[str]:
    with _CALLS_LOCK:
        return [d for k, d in CALLS if k == key]


# --- shared set-up ------------------------------------------------------------------------------


@contextmanager
def sandbox() -> Iterator[None]:
    """Settings every experiment runs under, in pytest and in bin/reliability alike.

    A fast password hasher (users are made by the dozen), the test client's host, the counting
    tool adapter, and no Celery message: approvals are resumed in-process.
    """
    hosts = [*settings.ALLOWED_HOSTS, "testserver", "127.0.0.1", "localhost"]
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"], ALLOWED_HOSTS=hosts,
                           HARNESS_TOOL_ADAPTERS={**getattr(settings, "HARNESS_TOOL_ADAPTERS", {}), **ADAPTERS}), \
            mock.patch("worker.tasks.enqueue_resume", return_value=None):
        yield


def tag() -> str:
    return uuid.uuid4().hex[:8]


def new_project(prefix: str) -> Project:
    return factories.make_project(f"{prefix}-{tag()}")


def new_user(project: Project | None, name: str, role: str | None = None, **flags: Any) -> User:
    user = factories.make_user(f"{name}-{tag()}", role=role, projects=[project] if project else [])
    if flags:
        User.objects.filter(pk=user.pk).update(**flags)
        user.refresh_from_db()
    return user


def logged_in(user: User, *, csrf_checks: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf_checks)
    client.force_login(user)
    return client


def bearer(secret: str) -> dict[str, Any]:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def waiting_run(project: Project, session: Session, *, key: str, arguments: dict, requester: Actor | None = None,
                task_id: int | None = None, checkpoint: bool = False) -> tuple[Run, ApprovalRequest]:
    """A running, agent-driven run that asks for approval of `sec_tool(arguments)`."""
    run = factories.make_run(project, session, task_id=task_id)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    if checkpoint:
        task_refs = run.task.artifact_refs if run.task else {}
        checkpoint_create(project=project, run_id=run.pk, label="before the gate",
                          artifact_fingerprints=artifact_fingerprints(task_refs), pending_gate={"tool": TOOL})
    approval = approval_request_create(project=project, run_id=run.pk, tool=TOOL, arguments=arguments,
                                       idempotency_key=key, actor=requester or Actor.for_agent("e"))
    return Run.objects.get(pk=run.pk), approval


def audit_count(project: Project, **filters: Any) -> int:
    return AuditEntry.objects.filter(project=project, **filters).count()


def decision_entries(approval: ApprovalRequest) -> int:
    return AuditEntry.objects.filter(target_type="approvalrequest", target_id=str(approval.pk),
                                     action__startswith="approval.").count()


# What these experiments found, and the fix with the regression test that keeps it fixed
# (tests/reliability/test_security_quick.py); a fixed finding no longer shows in the figures.
FINDINGS: dict[int, list[str]] = {
    10: ["FIXED: an approval row rewritten by a direct UPDATE so that it agrees with itself (approved_arguments "
         "with a matching approved_fingerprint, or a rejection turned into an approval) was executed by the "
         "resume. The resume now checks the row against the decision's append-only audit entry "
         "(worker/checks.py check_decision_audit; "
         "test_resume_checks_the_approval_row_against_the_audited_decision)."],
    13: ["FIXED: a chunked request body (Transfer-Encoding: chunked, no Content-Length) reached the views as an "
         "empty body under WSGI, so a POST ran as if it carried nothing (a session was created with defaults); "
         "harness/http/middleware.py now answers 411 length_required "
         "(test_a_chunked_body_is_refused_not_read_as_empty).",
         "FIXED: the JSON depth scan walked the whole body (0.7 s for the deepest array that fits in 1 MiB); it "
         "now stops at the first bracket past the limit (test_the_depth_scan_stops_at_the_first_bracket_past_"
         "the_limit)."],
    16: ["FIXED: admin run and task transitions (a person deciding a blocked run, say) and admin deletions of a "
         "memory write policy wrote no audit entry; runs_app/admin.py and memory_app/admin.py now audit them in "
         "the same transaction (test_admin_moves_and_policy_deletions_are_audited).",
         "FIXED (issue 19, defect 7): TRUNCATE was not refused (row triggers do not fire on it), run events and "
         "checkpoints could be deleted, the application connected as the tables' owner (which can disable "
         "triggers), and an audit entry inserted over SQL was trusted by the resume. Now the application runs "
         "as a runtime role that owns nothing and has no TRUNCATE (harness/roles.py, `manage.py runtime_role`; "
         "bin/reliability runs as it), DELETE of events and checkpoints is refused by trigger (runs_app "
         "migration 0013; only a LangGraph thread's checkpoints go, and the owner's retention door), and the "
         "audit log is hash-chained with a mac per entry, checked by the resume and `manage.py verify_audit` "
         "(tests/harness/test_runtime_role.py, tests/harness/test_audit_chain.py, "
         "test_resume_checks_the_approval_row_against_the_audited_decision[decision_forged])."],
}


def result(number: int, title: str, quick: bool, passed: bool, figures: dict, notes: str = "") -> Result:
    found = " ".join(FINDINGS.get(number, []))
    notes = " ".join(part for part in (found, notes) if part)
    return Result(number=number, title=title, passed=passed, figures=figures, command=command_for(number, quick),
                  notes=notes)


# --- 9: competing reviewers ---------------------------------------------------------------------

T9 = "Competing reviewers: approve against reject on one approval"


@experiment(9, T9)
def competing_reviewers(quick: bool) -> Result:
    """Per trial: two reviewers on two threads (own connections) decide one approval at once.

    1. Exactly one decision stands; the loser gets `already_decided`; one audit entry.
    2. Two resumes race (threads): an approval executes the tool exactly once, a rejection never.
    """
    trials = 20 if quick else 100
    figures: Counter = Counter(trials=trials)
    with sandbox():
        project = new_project("e9")
        session = factories.make_session(project)
        alice, bob = new_user(project, "alice", "reviewer"), new_user(project, "bob", "reviewer")
        for i in range(trials):
            key = f"e9-{project.slug}-{i}"
            run, approval = waiting_run(project, session, key=key, arguments={"trial": i})

            def decide(which: int, approval_id: int = approval.pk) -> str:
                if which == 0:
                    approval_decide(project=project.pk, approval_id=approval_id, actor=Actor.for_user(alice),
                                    decision="approve")
                    return "approved"
                approval_decide(project=project.pk, approval_id=approval_id, actor=Actor.for_user(bob),
                                decision="reject", reason="Too risky")
                return "rejected"

            outcomes = run_concurrently(2, decide)
            won = [o for o in outcomes if isinstance(o, str)]
            lost = [o for o in outcomes if isinstance(o, ConflictError) and o.code == "already_decided"]
            figures["unexpected_errors"] += sum(
                1 for o in outcomes if isinstance(o, BaseException) and o not in lost)
            approval.refresh_from_db()
            if len(won) != 1 or len(lost) != 1 or won[0] != approval.status:
                figures["not_exactly_one_decision"] += 1
            if decision_entries(approval) != 1:
                figures["audit_entries_not_one"] += 1
            figures[f"{approval.status}_wins"] += 1

            def resume(_i: int, run_id: int = run.pk) -> str:
                return resume_run_by_id(run_id)

            resumes = run_concurrently(2, resume)
            figures["resume_errors"] += sum(1 for o in resumes if isinstance(o, BaseException))
            executed = len(calls_for(key))
            bound = Run.objects.values_list("bound_result", flat=True).get(pk=run.pk) or {}
            if approval.status == ApprovalStatus.REJECTED:
                figures["executions_after_rejection"] += executed
                if bound.get("decision") != "rejected":
                    figures["rejection_not_bound"] += 1
            else:
                figures["approved_executed_not_once"] += int(executed != 1)
    for name in ("not_exactly_one_decision", "audit_entries_not_one", "executions_after_rejection",
                 "approved_executed_not_once", "rejection_not_bound", "unexpected_errors", "resume_errors",
                 "approved_wins", "rejected_wins"):
        figures.setdefault(name, 0)
    passed = all(figures[name] == 0 for name in (
        "not_exactly_one_decision", "audit_entries_not_one", "executions_after_rejection",
        "approved_executed_not_once", "rejection_not_bound", "unexpected_errors", "resume_errors"))
    return result(9, T9, quick, passed, dict(figures))


# --- 10: self-approval and tampering ----------------------------------------------------------

T10 = "Self-approval and tampering: refused every time; executed digest = approved digest"

TAMPERS: dict[str, str] = {
    # A direct UPDATE of the requested action after the decision.
    "arguments": "UPDATE runs_app_approvalrequest SET arguments = jsonb_set(arguments, '{amount}', '999999') "
                 "WHERE id = %s",
    # A direct UPDATE of what the reviewer approved.
    "approved_arguments": "UPDATE runs_app_approvalrequest SET approved_arguments = "
                          "jsonb_set(approved_arguments, '{amount}', '999999') WHERE id = %s",
    # The approved action and its fingerprint rewritten together, so the row agrees with itself.
    "approved_arguments_and_fingerprint": "",
    # The tool swapped under the approval.
    "tool": "UPDATE runs_app_approvalrequest SET tool = 'sec_tool_other' WHERE id = %s",
    # A rejection rewritten into an approval of the requested action.
    "rejection_rewritten": "",
    # The task's artifacts changed after the checkpoint recorded their fingerprints.
    "artifact_fingerprint": "",
    # Nobody decided: the row is rewritten into an approval by a reviewer and an audit entry saying so is
    # inserted over SQL (the first decision entry, agreeing with the row), as the application's role may.
    "decision_forged": "",
}
# Tampers that replace the reviewer's decision rather than follow it.
UNDECIDED_TAMPERS = frozenset({"decision_forged"})
_FORGED_DECISION = """
INSERT INTO harness_auditentry (project_id, actor, action, target_type, target_id, data, created_at, prev_hash,
                                hash, mac)
SELECT project_id, 'user:forger', 'approval.approved', 'approvalrequest', id::text,
       jsonb_build_object('reason', '', 'requested_fingerprint', action_fingerprint,
                          'approved_fingerprint', action_fingerprint, 'edited', false),
       now(), '', '', md5(random()::text) || md5(random()::text)
  FROM runs_app_approvalrequest WHERE id = %s
"""


def _tamper(kind: str, approval: ApprovalRequest, *, reviewer_id: int | None = None) -> None:
    with connection.cursor() as cursor:
        if kind == "decision_forged":
            cursor.execute("UPDATE runs_app_approvalrequest SET status = 'approved', approved_arguments = arguments, "
                           "approved_fingerprint = action_fingerprint, decided_by_id = %s, decided_at = now(), "
                           "version = version + 1 WHERE id = %s", [reviewer_id, approval.pk])
            cursor.execute(_FORGED_DECISION, [approval.pk])
        elif kind == "approved_arguments_and_fingerprint":
            forged = {**(approval.approved_arguments or {}), "amount": 999999}
            cursor.execute("UPDATE runs_app_approvalrequest SET approved_arguments = %s, approved_fingerprint = %s "
                           "WHERE id = %s",
                           [json.dumps(forged), action_fingerprint(approval.tool, forged), approval.pk])
        elif kind == "rejection_rewritten":
            cursor.execute("UPDATE runs_app_approvalrequest SET status = 'approved', approved_arguments = arguments, "
                           "approved_fingerprint = action_fingerprint WHERE id = %s", [approval.pk])
        elif kind == "artifact_fingerprint":
            cursor.execute("UPDATE runs_app_task SET artifact_refs = '{\"draft\": \"sha256:forged\"}' "
                           "WHERE id = (SELECT task_id FROM runs_app_run WHERE id = %s)", [approval.run_id])
        else:
            cursor.execute(TAMPERS[kind], [approval.pk])


def _self_approval_attempts(project: Project, session: Session, figures: Counter, rounds: int) -> None:
    """The requester (a reviewer, staff) and an agent token try to decide through the API, console and admin."""
    requester = new_user(project, "self", "reviewer", is_staff=True)
    requester.user_permissions.add(*Permission.objects.filter(
        codename__in=["view_approvalrequest", "change_approvalrequest"]))
    _, agent_secret = factories.make_agent_token(project, name=f"e10-agent-{tag()}")
    personal = bearer(factories.make_personal_token(requester)[1])
    agent = bearer(agent_secret)
    person, anonymous = logged_in(requester), Client()
    for i in range(rounds):
        _, approval = waiting_run(project, session, key=f"e10-self-{project.slug}-{i}", arguments={"amount": i},
                                  requester=Actor.for_user(requester))
        api = f"/api/v1/approvals/{approval.pk}/decision/"
        console = f"/approvals/{approval.pk}/approve/"
        admin_action = {"action": "approve", "_selected_action": [approval.pk], "index": 0}
        body, form = {"decision": "approve", "expected_version": approval.version}, {"version": approval.version}
        attempts = {
            "api_requester": person.post(api, body, content_type="application/json", **personal),
            "api_requester_session": person.post(api, body, content_type="application/json"),
            "api_agent": anonymous.post(api, body, content_type="application/json", **agent),
            "console_requester": person.post(console, form),
            "console_agent": anonymous.post(console, form, **agent),
            "admin_requester": person.post("/admin/runs_app/approvalrequest/", admin_action),
            "admin_agent": anonymous.post("/admin/runs_app/approvalrequest/", admin_action, **agent),
        }
        approval.refresh_from_db()
        figures["self_approval_attempts"] += len(attempts)
        figures["self_approval_decisions"] += int(approval.status != ApprovalStatus.PENDING)
        figures["self_approval_audit_entries"] += decision_entries(approval)
        for door, response in attempts.items():
            # Refused: 403, or (agent tokens at the console/admin, which never read tokens) the login page.
            if response.status_code in (403, 302) or door == "admin_requester":
                continue
            figures[f"unexpected_{door}_{response.status_code}"] += 1


@experiment(10, T10)
def self_approval_and_tampering(quick: bool) -> Result:
    """1. Self-approval through every door: no decision, no audit entry.
    2. Tampering after the decision, one kind per trial: the resume blocks, the tool is never called.
    3. Untampered controls (plain and edited approvals): the tool runs once, with exactly the
       arguments whose fingerprint the decision recorded.
    """
    rounds = 3 if quick else 20
    per_kind = 3 if quick else 20
    controls = 6 if quick else 60
    figures: Counter = Counter()
    with sandbox():
        project = new_project("e10")
        session = factories.make_session(project)
        _self_approval_attempts(project, session, figures, rounds)
        reviewer = new_user(project, "rev", "reviewer")
        for kind in TAMPERS:
            for i in range(per_kind):
                key = f"e10-{kind}-{project.slug}-{i}"
                task = factories.make_task(project, artifact_refs={"draft": "sha256:original"})
                run, approval = waiting_run(project, session, key=key, arguments={"to": "acme", "amount": i},
                                            task_id=task.pk, checkpoint=True)
                decision = "reject" if kind == "rejection_rewritten" else "approve"
                edited = {"to": "acme", "amount": i + 1} if i % 2 else None
                if kind not in UNDECIDED_TAMPERS:
                    approval_decide(project=project.pk, approval_id=approval.pk, actor=Actor.for_user(reviewer),
                                    decision=decision, reason="no", edited_arguments=edited)
                approval.refresh_from_db()
                _tamper(kind, approval, reviewer_id=reviewer.pk)
                outcome = resume_run_by_id(run.pk)
                figures["tampered_trials"] += 1
                figures["tampered_refused"] += int(outcome == "blocked")
                figures["tampered_executions"] += len(calls_for(key))
                step = Run.objects.values_list("blocked_step", flat=True).get(pk=run.pk)
                figures[f"blocked_at_{step or 'none'}"] += 1
        for i in range(controls):
            key = f"e10-control-{project.slug}-{i}"
            run, approval = waiting_run(project, session, key=key, arguments={"to": "acme", "amount": i})
            edited = {"to": "acme", "amount": i, "memo": "edited"} if i % 2 else None
            approval_decide(project=project.pk, approval_id=approval.pk, actor=Actor.for_user(reviewer),
                            decision="approve", edited_arguments=edited, reason="edited" if edited else "")
            outcome = resume_run_by_id(run.pk)
            approved = AuditEntry.objects.get(target_type="approvalrequest", target_id=str(approval.pk),
                                              action="approval.approved").data["approved_fingerprint"]
            executed = calls_for(key)
            approval.refresh_from_db()
            figures["controls"] += 1
            figures["controls_done"] += int(outcome == "done")
            figures["controls_executed_once"] += int(len(executed) == 1)
            figures["executed_digest_mismatch"] += sum(
                1 for d in executed if d != digest(approval.approved_arguments)
                or action_fingerprint(TOOL, approval.approved_arguments) != approved)
    figures = Counter(figures)
    passed = (
        figures["self_approval_decisions"] == 0 and figures["self_approval_audit_entries"] == 0
        and not any(k.startswith("unexpected_") for k in figures)
        and figures["tampered_refused"] == figures["tampered_trials"] > 0 and figures["tampered_executions"] == 0
        and figures["controls_done"] == figures["controls_executed_once"] == figures["controls"] > 0
        and figures["executed_digest_mismatch"] == 0
    )
    for name in ("self_approval_decisions", "self_approval_audit_entries", "tampered_executions",
                 "executed_digest_mismatch"):
        figures.setdefault(name, 0)
    return result(10, T10, quick, passed, dict(figures))


# --- 11: tenant isolation matrix --------------------------------------------------------------

T11 = "Tenant isolation matrix: every object endpoint x other project's principals: 0 successes"

MEMORY_BODIES = {
    "/supersede/": {"content": "A replacement fact.", "expected_version": 1, "reason": "experiment"},
    "/review/": {"decision": "approve", "expected_version": 1}, "/expire/": {"expected_version": 1},
    "/delete/": {"expected_version": 1, "reason": "experiment"}, "/erase/": {},
}


def object_operations() -> list[tuple[str, str]]:
    """(METHOD, path template) of every operation in the OpenAPI schema that addresses one record."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return sorted(
        (method.upper(), path) for path, ops in schema["paths"].items() if "{id}" in path
        for method in ops if method in ("get", "post", "put", "patch", "delete")
    )


def _owner_ids(world: Any, memory_id: int, snapshot_id: int) -> dict[str, int]:
    from tests.api.test_access import _handoff, _question, _rule, _tool_schema, _webhook

    return {
        "/api/v1/sessions/": world.session.pk, "/api/v1/runs/": world.run.pk,
        "/api/v1/checkpoints/": world.checkpoint.pk, "/api/v1/approvals/": world.approval.pk,
        "/api/v1/effects/": world.effect.pk, "/api/v1/tasks/": world.task.pk,
        "/api/v1/memory/records/": memory_id, "/api/v1/memory/context/": snapshot_id,
        "/api/v1/handoffs/": _handoff(world).pk, "/api/v1/webhooks/": _webhook(world).pk,
        "/api/v1/projects/": world.project.pk, "/api/v1/tools/schemas/": _tool_schema(world).pk,
        "/api/v1/questions/": _question(world).pk, "/api/v1/standing-approvals/": _rule(world).pk,
    }


def _body(method: str, template: str, world: Any) -> Any:
    from tests.api.test_access import ENDPOINTS

    for endpoint in ENDPOINTS:
        if (endpoint.method, endpoint.template) == (method, template):
            return endpoint.body(world)
    return next((body for suffix, body in MEMORY_BODIES.items() if template.endswith(suffix)), None)


def _memory_of(project: Project, run: Run) -> tuple[int, int]:
    from harness.actors import Actor
    from memory_app.context import context_project
    from memory_app.services import memory_write

    record = memory_write(project=project, actor=Actor.for_agent("e11"), scope="project", subject="secret",
                          content=f"The vault code of {project.slug} is 4711.", source_run_id=run.pk).record
    assert record is not None
    # A run of an `external` session asking for it, so the snapshot holds the secret (memory_app.context).
    reader = factories.make_run(project, factories.make_session(project, memory_policy="external"))
    snapshot = context_project(project=project, run_id=reader.pk, budget_chars=500, query="vault code")
    assert snapshot.memory_ids == [record.pk]
    return record.pk, snapshot.pk


@experiment(11, T11)
def tenant_isolation(quick: bool) -> Result:
    """For every object operation of the schema, call the owner's record as each principal of another
    project (agent token, reader token, reviewer and operator by personal token and by login session).

    1. Nobody succeeds (no 2xx), and no body names anything of the owner's record.
    2. The principal fit for the operation (the one the owner would use) gets 404 `not_found`.
    3. Any other refusal (a role refused before the lookup) is exactly what the same principal gets
       for an id that does not exist: the response is no oracle for the record's existence.
    """
    from tests.api.conftest import build_world

    figures: Counter = Counter()
    rows: list[str] = []
    with sandbox():
        owner = build_world(new_project("e11-own"), f"own-{tag()}")
        other = build_world(new_project("e11-oth"), f"oth-{tag()}")
        memory_id, snapshot_id = _memory_of(owner.project, owner.running_run)
        _memory_of(other.project, other.running_run)
        operator = new_user(other.project, "e11-op", "operator")
        reviewer_user = User.objects.get(username=_username_of(other.reviewer))
        callers: dict[str, tuple[Client, dict]] = {
            "agent_token": (Client(), other.agent.headers),
            "reader_token": (Client(), other.reader.headers),
            "reviewer_token": (Client(), other.reviewer.headers),
            "operator_token": (Client(), bearer(factories.make_personal_token(operator)[1])),
            "reviewer_session": (logged_in(reviewer_user), {}),
            "operator_session": (logged_in(operator), {}),
        }
        ids = _owner_ids(owner, memory_id, snapshot_id)
        operations = object_operations()
        figures["operations"] = len(operations)
        for method, template in operations:
            prefix = next(p for p in ids if template.startswith(p))
            path = template.replace("{id}", str(ids[prefix]))
            missing = template.replace("{id}", str(10**15))
            body = _body(method, template, owner)
            fit = _fit_caller(method, template)
            for name, (client, headers) in callers.items():
                response = _call(client, method, path, body, headers)
                figures["requests"] += 1
                status = response.status_code
                if 200 <= status < 300:
                    figures["successes"] += 1
                    rows.append(f"{name} {method} {template}: {status}")
                    continue
                payload = response.json() if response.get("Content-Type", "").startswith("application/json") else {}
                if owner.project.slug in response.content.decode(errors="replace") or "4711" in \
                        response.content.decode(errors="replace"):
                    figures["bodies_naming_the_owner"] += 1
                if status == 404:
                    figures["not_found"] += 1
                    if set(payload) != {"code", "detail"}:
                        figures["not_found_with_extra_fields"] += 1
                    continue
                if name == fit:
                    figures["fit_caller_not_404"] += 1
                    rows.append(f"{name} {method} {template}: {status} {payload.get('code')}")
                baseline = _call(client, method, missing, body, headers)
                if (baseline.status_code, (baseline.json() or {}).get("code")) != (status, payload.get("code")):
                    figures["refusals_that_differ_for_a_missing_id"] += 1
                    rows.append(f"{name} {method} {template}: {status} vs missing {baseline.status_code}")
                figures[f"refused_{status}_before_lookup"] += 1
        _references(owner, other, memory_id, figures, rows)
        for name in ("successes", "fit_caller_not_404", "refusals_that_differ_for_a_missing_id",
                     "bodies_naming_the_owner", "not_found_with_extra_fields", "reference_leaks"):
            figures.setdefault(name, 0)
    passed = figures["requests"] > 0 and all(figures[name] == 0 for name in (
        "successes", "fit_caller_not_404", "refusals_that_differ_for_a_missing_id", "bodies_naming_the_owner",
        "not_found_with_extra_fields", "reference_leaks"))
    return result(11, T11, quick, passed, dict(figures), notes="; ".join(rows[:20]))


def _references(owner: Any, other: Any, memory_id: int, figures: Counter, rows: list[str]) -> None:
    """The other project's agent names the owner's records inside a body or a filter: 404 or nothing listed."""
    writes = [
        ("/api/v1/runs/", {"session": owner.session.pk}),
        ("/api/v1/runs/", {"session": other.session.pk, "task": owner.task.pk}),
        ("/api/v1/checkpoints/", {"run": owner.run.pk}),
        ("/api/v1/checkpoints/", {"run": other.run.pk, "parent": owner.checkpoint.pk}),
        ("/api/v1/checkpoints/", {"task": owner.task.pk}),
        ("/api/v1/effects/", {"idempotency_key": f"x-{tag()}", "tool": "t", "run": owner.running_run.pk}),
        ("/api/v1/memory/records/", {"scope": "project", "content": "x", "source_run": owner.run.pk}),
        ("/api/v1/memory/context/", {"run": owner.run.pk, "budget_chars": 100}),
    ]
    for path, body in writes:
        response = other.agent.post(path, body)
        figures["reference_requests"] += 1
        if response.status_code < 300 or response.status_code >= 500:
            figures["reference_leaks"] += 1
            rows.append(f"reference POST {path} {body}: {response.status_code}")
    reads = [("/api/v1/checkpoints/?run=", owner.run.pk, owner.checkpoint.pk),
             ("/api/v1/approvals/?run=", owner.waiting_run.pk, owner.approval.pk),
             ("/api/v1/memory/records/?project=", owner.project.slug, memory_id)]
    for prefix, value, leaked in reads:
        response = other.agent.get(f"{prefix}{value}")
        figures["reference_requests"] += 1
        rows_seen = response.json().get("results", []) if response.status_code == 200 else []
        if response.status_code >= 500 or any(row.get("id") == leaked for row in rows_seen):
            figures["reference_leaks"] += 1
            rows.append(f"reference GET {prefix}{value}: {response.status_code}")


def _username_of(api_client: Any) -> str:
    from harness.models import ApiToken

    secret = api_client.headers["HTTP_AUTHORIZATION"].removeprefix("Bearer ")
    user = ApiToken.objects.select_related("user").get(digest=ApiToken.hash_secret(secret)).user
    assert user is not None
    return user.username


OPERATOR_ONLY = ("/held/", "/review/", "/expire/", "/delete/", "/erase/", "/bulk-delete/", "/bulk-expire/")


def _fit_caller(method: str, template: str) -> str:
    if template.endswith(("/decision/", "/answer/")) or template.startswith("/api/v1/standing-approvals/") and (
            method == "POST"):
        return "reviewer_token"  # a decision, a question's answer, a standing approval's revoke: a person's
    if template.endswith(OPERATOR_ONLY) or (method == "PUT" and template.endswith("/retention/")):
        return "operator_token"
    return "agent_token"


def _call(client: Client, method: str, path: str, body: Any, headers: dict) -> Any:
    if method == "GET":
        return client.get(path, **headers)
    return client.generic(method, path, json.dumps(body if body is not None else {}), "application/json", **headers)


# --- 16: the audit log ------------------------------------------------------------------------

T16 = "Audit log: every human decision and memory change writes an entry the application cannot rewrite"


class _Doors:
    """The people and clients of experiment 16: one project, a reviewer who holds the admin role (the Django
    admin is entered by the admin role, not by is_staff and model permissions: issue 30), an agent token."""

    def __init__(self) -> None:
        from memory_app.models import MemoryWritePolicy

        self.project = new_project("e16")
        self.session = factories.make_session(self.project)
        self.run = factories.make_run(self.project, self.session, active_agent="e16")
        self.person = new_user(self.project, "curator", "reviewer")
        from django.contrib.auth.models import Group

        self.person.groups.add(Group.objects.get_or_create(name="admin")[0])
        self.requester = Actor.for_agent(tag())
        _, secret = factories.make_agent_token(self.project, name=f"e16-{tag()}")
        self.agent = bearer(secret)
        self.token = bearer(factories.make_personal_token(self.person)[1])
        self.browser = logged_in(self.person)
        self.api = Client()
        # Writes to the user scope are held for review, to the session scope refused by a pattern.
        MemoryWritePolicy.objects.create(project=self.project, scope="user", decision="hold")
        MemoryWritePolicy.objects.create(project=self.project, scope="session", blocked_patterns=["forbidden"])
        self.n = 0

    def approval(self) -> ApprovalRequest:
        self.n += 1
        _, approval = waiting_run(self.project, self.session, key=f"e16-{self.project.slug}-{self.n}",
                                  arguments={"n": self.n}, requester=self.requester)
        return approval

    def record(self, scope: str = "project", scope_key: str = "", *, agent: bool = True) -> int:
        from harness.actors import Actor
        from memory_app.services import memory_write

        self.n += 1
        actor = Actor.for_agent("e16") if agent else Actor.for_user(self.person)
        written = memory_write(project=self.project, actor=actor, scope=scope, scope_key=scope_key,
                               content=f"Fact number {self.n} of {self.project.slug}.", source_run_id=self.run.pk)
        assert written.record is not None
        return written.record.pk

    def held(self) -> int:
        return self.record("user", "u1")

    def api_post(self, path: str, body: Any, headers: dict) -> Any:
        return self.api.post(path, body, content_type="application/json", **headers)

    def admin_action(self, model: str, action: str, pk: int) -> Any:
        # `reason`: the memory admin's action bar asks why a record is deleted; other action bars ignore it.
        return self.browser.post(f"/admin/{model}/", {"action": action, "_selected_action": [pk], "index": 0,
                                                      "reason": "experiment"})


def _decision_paths(d: _Doors) -> list[tuple[str, str, Callable[[], Any]]]:
    """(door, expected audit action, the call). Each call acts on a fresh record."""
    def api_decide(body: dict) -> Callable[[], Any]:
        def call() -> Any:
            approval = d.approval()
            return d.api_post(f"/api/v1/approvals/{approval.pk}/decision/",
                              {**body, "expected_version": approval.version}, d.token)

        return call

    def console(verb: str, data: dict) -> Callable[[], Any]:
        def call() -> Any:
            approval = d.approval()
            return d.browser.post(f"/approvals/{approval.pk}/{verb}/", {**data, "version": approval.version})

        return call

    def admin_run(action: str) -> Callable[[], Any]:
        return lambda: d.admin_action("runs_app/run", action, factories.make_run(d.project, d.session).pk)

    def admin_task(action: str) -> Callable[[], Any]:
        return lambda: d.admin_action("runs_app/task", action, factories.make_task(d.project).pk)

    return [
        ("api", "approval.approved", api_decide({"decision": "approve"})),
        ("api", "approval.rejected", api_decide({"decision": "reject", "reason": "no"})),
        ("api", "approval.approved",
         api_decide({"decision": "approve", "edited_arguments": {"n": 0}, "reason": "edited"})),
        ("console", "approval.approved", console("approve", {})),
        ("console", "approval.rejected", console("reject", {"reason": "no"})),
        ("console", "approval.approved", console("edit-approve", {"arguments": '{"n": 0}', "reason": "edited"})),
        ("admin", "approval.approved", lambda: d.admin_action("runs_app/approvalrequest", "approve", d.approval().pk)),
        ("admin", "run.cancelled", admin_run("move_to_cancelled")),
        ("admin", "task.abandoned", admin_task("move_to_abandoned")),
    ]


def _console_post(d: _Doors, record: int, path: str, data: dict) -> Any:
    """A console form posted with the version of the record its page showed."""
    return d.browser.post(path.format(record), {**data, "version": _version(record)})


def _memory_paths(d: _Doors) -> list[tuple[str, str, Callable[[], Any]]]:
    api = "/api/v1/memory/records"

    def write(scope: str, content: str, scope_key: str = "") -> Callable[[], Any]:
        # A fresh text on every call (`{}` is filled in then): a repeated text would merge instead.
        return lambda: d.api_post(f"{api}/", {"scope": scope, "scope_key": scope_key,
                                              "content": content.format(tag()), "source_run_id": d.run.pk}, d.agent)

    def on_record(suffix: str, body: dict, *, held: bool = False, agent: bool = False) -> Callable[[], Any]:
        def call() -> Any:
            fresh = {key: value.format(tag()) if isinstance(value, str) else value for key, value in body.items()}
            record = d.held() if held else d.record()
            if suffix != "erase":  # an erasure takes no version: it removes the record and its history
                fresh["expected_version"] = _version(record)
            return d.api_post(f"{api}/{record}/{suffix}/", fresh, d.agent if agent else d.token)

        return call

    def bulk(suffix: str) -> Callable[[], Any]:
        why = {"reason": "experiment"} if suffix == "bulk-delete" else {}
        return lambda: d.api_post(f"{api}/{suffix}/", {"project": d.project.slug, "ids": [d.record()], **why},
                                  d.token)

    def merged() -> Any:
        d.record()
        return d.api_post(f"{api}/", {"scope": "project", "content": f"Fact number {d.n} of {d.project.slug}.",
                                      "source_run_id": d.run.pk}, d.agent)

    def resolve() -> Any:
        keep, old = d.record(), d.record()
        version = _version(old)
        return d.browser.post(f"/memory/{old}/resolve/", {"version": version, "keep": keep})

    def console_bulk(action: str) -> Callable[[], Any]:
        return lambda: d.browser.post("/memory/bulk/", {"ids": [d.record()], "action": action, "confirm": "on",
                                                        "reason": "experiment"})

    def admin(action: str, *, held: bool = False) -> Callable[[], Any]:
        return lambda: d.admin_action("memory_app/memoryrecord", action, d.held() if held else d.record())

    return [
        ("api", "memory.accepted", write("project", "A new fact {}.")),
        ("api", "memory.merged", merged),
        ("api", "memory.held", write("user", "A held fact {}.", "u1")),
        ("api", "memory.write_rejected", write("session", "forbidden words", str(d.session.pk))),
        ("api", "memory.superseded", on_record("supersede", {"content": "Replaced {}.", "reason": "experiment"})),
        ("api", "memory.review_approved", on_record("review", {"decision": "approve"}, held=True)),
        ("api", "memory.review_rejected", on_record("review", {"decision": "reject"}, held=True)),
        ("api", "memory.expired", on_record("expire", {})),
        ("api", "memory.deleted", on_record("delete", {"reason": "experiment"})),
        ("api", "memory.erased", on_record("erase", {})),
        ("api", "memory.deleted", bulk("bulk-delete")),
        ("api", "memory.expired", bulk("bulk-expire")),
        ("console", "memory.superseded", lambda: _console_edit(d)),
        ("console", "memory.superseded", resolve),
        ("console", "memory.deleted", lambda: _console_post(d, d.record(), "/memory/{}/delete/",
                                                            {"confirm": "on", "reason": "experiment"})),
        ("console", "memory.deleted", console_bulk("delete")),
        ("console", "memory.expired", console_bulk("expire")),
        ("console", "memory.review_approved",
         lambda: _console_post(d, d.held(), "/memory/held/{}/review/", {"decision": "accept"})),
        ("console", "memory.review_rejected",
         lambda: _console_post(d, d.held(), "/memory/held/{}/review/", {"decision": "reject"})),
        ("admin", "memory.review_approved", admin("approve_held", held=True)),
        ("admin", "memory.review_rejected", admin("reject_held", held=True)),
        ("admin", "memory.expired", admin("expire_now")),
        ("admin", "memory.deleted", admin("tombstone")),
        ("admin", "memory.erased", admin("erase")),
        ("admin", "memory.policy_saved", lambda: _admin_policy_add(d)),
        ("admin", "memory.policy_deleted", lambda: _admin_policy_delete(d)),
    ]


def _version(record_id: int) -> int:
    from memory_app.models import MemoryRecord

    return MemoryRecord.objects.values_list("version", flat=True).get(pk=record_id)


def _console_edit(d: _Doors) -> Any:
    pk = d.record()
    return d.browser.post(f"/memory/{pk}/edit/", {"version": _version(pk), "content": f"Edited {tag()}.",
                                                        "reason": "experiment"})


def _admin_policy_add(d: _Doors) -> Any:
    from memory_app.models import MemoryWritePolicy

    # Set-up, not a path under test: one policy per scope, so a repeated round frees the scope first.
    MemoryWritePolicy.objects.filter(project=d.project, scope="agent").delete()
    return d.browser.post("/admin/memory_app/memorywritepolicy/add/", {
        "project": d.project.pk, "scope": "agent", "decision": "accept", "max_chars": 100,
        "provenance_required": "on", "blocked_patterns": "[]"})


def _admin_policy_delete(d: _Doors) -> Any:
    from memory_app.models import MemoryWritePolicy

    policy = MemoryWritePolicy.objects.create(project=d.project, scope="agent" if not MemoryWritePolicy.objects.filter(
        project=d.project, scope="agent").exists() else "project")
    return d.browser.post(f"/admin/memory_app/memorywritepolicy/{policy.pk}/delete/", {"post": "yes"})


RUNTIME_ROLE = "harness_app"  # what bin/reliability runs as (harness/roles.py)


def _runtime_role() -> str:
    """The application's runtime role: this process's own when it runs as one (bin/reliability), else
    `RUNTIME_ROLE`, granted on this database by this process (the suite connects as the owner)."""
    from harness.roles import runtime_role_create, runtime_role_grant, runtime_role_problems

    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        (me,) = cursor.fetchone()
    if not runtime_role_problems(me):
        return str(me)
    runtime_role_create(RUNTIME_ROLE)
    problems = runtime_role_problems(RUNTIME_ROLE)
    if problems:
        raise RuntimeError("; ".join(problems))
    runtime_role_grant(RUNTIME_ROLE)
    return RUNTIME_ROLE


def _connect_as(role: str) -> Any:
    import psycopg

    s = connection.settings_dict
    return psycopg.connect(host=s.get("HOST") or "127.0.0.1", port=int(s.get("PORT") or 5432), dbname=s["NAME"],
                           user=role, password=s.get("PASSWORD") or None, autocommit=True)


# Every way to rewrite history a role with the application's credentials could try over SQL.
HISTORY_REWRITES: dict[str, str] = {
    "sql_update": "UPDATE harness_auditentry SET data = '{}'",
    "sql_delete": "DELETE FROM harness_auditentry",
    "sql_truncate": "TRUNCATE harness_auditentry",
    "sql_chain_head_update": "UPDATE harness_auditchainhead SET seq = 0",
    "sql_event_update": "UPDATE runs_app_runevent SET data = '{}'",
    "sql_event_delete": "DELETE FROM runs_app_runevent",
    "sql_event_truncate": "TRUNCATE runs_app_runevent CASCADE",
    "sql_checkpoint_update": "UPDATE runs_app_checkpoint SET label = 'rewritten'",
    "sql_checkpoint_delete": "DELETE FROM runs_app_checkpoint WHERE external_id = ''",
    "sql_checkpoint_truncate": "TRUNCATE runs_app_checkpoint CASCADE",
    "sql_disable_triggers": "ALTER TABLE harness_auditentry DISABLE TRIGGER ALL",
    "sql_replica_mode": "SET session_replication_role = replica",
}


def _rewrites_refused() -> tuple[dict[str, bool], str]:
    """UPDATE, DELETE and TRUNCATE of the history, and the ways around its triggers: the ORM's on this
    process's connection, raw SQL on a connection as the application's runtime role (each attempt in a
    transaction rolled back, so one that went through undoes itself)."""
    from django.db import DatabaseError

    attempts: dict[str, Callable[[], Any]] = {
        "orm_update": lambda: AuditEntry.objects.all().update(actor="forged"),
        "orm_delete": lambda: AuditEntry.objects.all().delete(),
    }
    refused: dict[str, bool] = {}
    for name, attempt in attempts.items():
        try:
            with transaction.atomic():
                attempt()
                # It went through: undo it, whatever happened.
                raise _Undo
        except _Undo:
            refused[name] = False
        except DatabaseError:
            refused[name] = True
    role = _runtime_role()
    import psycopg

    from runs_app.services import run_event_append

    # History for each rewrite to find (a DELETE of no row is no rewrite).
    run = factories.make_run(new_project("e16-history"))
    run_event_append(project=run.project_id, run_id=run.pk, kind="e16.probe")
    checkpoint_create(project=run.project_id, run_id=run.pk, label="e16")
    with _connect_as(role) as raw:
        for name, sql in HISTORY_REWRITES.items():
            try:
                with raw.transaction():
                    raw.execute(sql)
                    raise _Undo
            except _Undo:
                refused[name] = False
            except psycopg.Error:
                refused[name] = True
    return refused, role


def _forged_entry_detected(role: str) -> bool:
    """An entry inserted over SQL as the runtime role (its INSERT is allowed) is reported by the chain's check."""
    from harness.audit import audit_chain_verify, audit_record

    project = new_project("e16-forge")
    audit_record(project=project, actor=Actor.for_agent("e16"), action="memory.accepted", target=project)
    with _connect_as(role) as raw:
        raw.execute("INSERT INTO harness_auditentry (project_id, actor, action, target_type, target_id, data, "
                    "created_at, prev_hash, hash, mac) VALUES (%s, 'user:forger', 'approval.approved', "
                    "'approvalrequest', '1', '{}', now(), '', '', repeat('ab', 32))", [project.pk])
    (report,) = audit_chain_verify(project_ids=[project.pk])
    return report.entries == 2 and [b.seq for b in report.breaks] == [2]


class _Undo(Exception):
    pass


@experiment(16, T16)
def audit_log(quick: bool) -> Result:
    """1. Every decision path (API, console, admin) and every memory change writes an AuditEntry
       naming the person or agent (rounds: each path once in the quick form, 5 times in full).
    2. UPDATE, DELETE and TRUNCATE of the audit table, run events and checkpoints fail, from the ORM and
       from raw SQL as the application's runtime role, and so do disabling the triggers and replica mode.
    3. An entry that role inserts over SQL (allowed) is reported by the chain's check (a forged mac).
    """
    rounds = 1 if quick else 5
    figures: Counter = Counter()
    missing: list[str] = []
    with sandbox():
        d = _Doors()
        paths = _decision_paths(d) + _memory_paths(d)
        for _ in range(rounds):
            for door, action, call in paths:
                before = AuditEntry.objects.filter(project=d.project).order_by("-id").values_list("id", flat=True)
                last = before.first() or 0
                response = call()
                figures["changes"] += 1
                written = list(AuditEntry.objects.filter(project=d.project, id__gt=last).values_list("action", "actor"))
                # A write the policy refuses answers 422, and that refusal is audited too.
                if response.status_code >= 400 and not (action == "memory.write_rejected"
                                                        and response.status_code == 422):
                    figures["refused_changes"] += 1
                    missing.append(f"{door} {action}: HTTP {response.status_code}")
                elif not any(a == action for a, _ in written):
                    figures["changes_without_audit"] += 1
                    missing.append(f"{door} {action}: wrote {written}")
                else:
                    figures[f"audited_{door}"] += 1
        refused, role = _rewrites_refused()
        forged_detected = _forged_entry_detected(role)
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user")
            me, superuser = cursor.fetchone()
    figures.update({f"{name}_refused": int(ok) for name, ok in refused.items()})
    figures["forged_entry_detected"] = int(forged_detected)
    figures.setdefault("changes_without_audit", 0)
    figures.setdefault("refused_changes", 0)
    passed = (figures["changes_without_audit"] == 0 and figures["refused_changes"] == 0
              and all(refused.values()) and forged_detected)
    notes = (f"raw SQL as the runtime role {role} (owns nothing, no superuser: harness/roles.py); "
             f"this process's role {me} (superuser: {superuser})")
    if missing:
        notes += "; " + "; ".join(missing[:12])
    return result(16, T16, quick, passed, dict(figures), notes=notes)


# --- a real HTTP stack: gunicorn on loopback ---------------------------------------------------


def database_url() -> str:
    """The database this process uses (pytest-django's test database inside the suite)."""
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def gunicorn(name: str, *, env: dict | None = None) -> Iterator[str]:
    """`gunicorn config.wsgi` on a free loopback port against this database; killed (its group) on exit."""
    import requests

    port = free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = (ARTIFACTS / f"gunicorn-{name}-{os.getpid()}.log").open("wb")
    environ = {
        **os.environ, "DATABASE_URL": database_url(), "DEBUG": "0", "SECURE_COOKIES": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost", "SECRET_KEY": os.environ.get("SECRET_KEY") or "reliability-only",
        "HARNESS_TOOL_ADAPTERS": json.dumps(ADAPTERS), **(env or {}),
    }
    environ.pop("HARNESS_CRASH_AT", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--threads", "4", "--timeout", "30", "--graceful-timeout", "3"],
        cwd=ROOT, env=environ, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"{url}/login/", timeout=2)
                break
            except requests.RequestException:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"gunicorn did not start; see {log.name}") from None
                time.sleep(0.2)
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        log.close()


# --- 13: request limits -------------------------------------------------------------------------

T13 = "Limits through gunicorn: one byte over the body limit is 413, deep nesting 400 within a second, never 500"


def _raw(
    url: str, method: str, path: str, body: bytes, headers: dict[str, str], *, chunked: bool = False
) -> tuple[int, dict, float]:
    """One request over http.client (exact bytes, exact headers); returns status, JSON body and seconds."""
    import http.client

    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    started = time.monotonic()
    try:
        if chunked:
            conn.putrequest(method, path)
            for name, value in {**headers, "Transfer-Encoding": "chunked"}.items():
                conn.putheader(name, value)
            conn.endheaders()
            try:
                for start in range(0, len(body), 65536):
                    piece = body[start:start + 65536]
                    conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                conn.send(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server answered before reading it all: its response is read below
        else:
            conn.request(method, path, body=body, headers={**headers, "Content-Length": headers.get(
                "Content-Length", str(len(body)))})
        response = conn.getresponse()
        raw = response.read()
        elapsed = time.monotonic() - started
        try:
            payload = json.loads(raw) if raw else {}
        except ValueError:
            payload = {}
        return response.status, payload if isinstance(payload, dict) else {}, elapsed
    finally:
        conn.close()


def _padded(limit: int, size: int) -> bytes:
    """A valid JSON object of exactly `size` bytes (padding in a string value)."""
    head = b'{"role": "writer", "memory_policy": "session", "pad": "'
    return head + b"x" * (size - len(head) - 2) + b'"}'


def _limit_cases(limit: int, depth: int, run_id: int, approval_id: int) -> list[dict[str, Any]]:
    json_type = {"Content-Type": "application/json"}
    deepest = limit // 2  # the deepest array that still fits under the body limit
    cases: list[dict[str, Any]] = [
        {"name": "at_limit", "path": "/api/v1/sessions/", "body": _padded(limit, limit), "expect": {201, 400}},
        {"name": "one_byte_over", "path": "/api/v1/sessions/", "body": _padded(limit, limit + 1), "expect": {413}},
        {"name": "one_byte_over_chunked", "path": "/api/v1/sessions/", "body": _padded(limit, limit + 1),
         "chunked": True, "expect": {411, 413}},
        {"name": "small_chunked", "path": "/api/v1/sessions/", "body": b'{"role": "writer"}', "chunked": True,
         "expect": {411}},
        {"name": "length_claims_over", "path": "/api/v1/sessions/", "body": b"{}",
         "headers": {"Content-Length": str(limit + 1)}, "expect": {413}},
        {"name": "length_not_a_number", "path": "/api/v1/sessions/", "body": b"{}",
         "headers": {"Content-Length": "12abc"}, "expect": {400}},
        {"name": "one_byte_over_memory", "path": "/api/v1/memory/records/", "body": _padded(limit, limit + 1),
         "expect": {413}},
        {"name": "one_byte_over_events", "path": f"/api/v1/runs/{run_id}/events/", "body": _padded(limit, limit + 1),
         "expect": {413}},
        {"name": "one_byte_over_decision", "path": f"/api/v1/approvals/{approval_id}/decision/",
         "body": _padded(limit, limit + 1), "expect": {413}, "reviewer": True},
        {"name": "one_byte_over_form", "path": "/login/", "body": b"a=" + b"x" * (limit - 1),
         "headers": {"Content-Type": "application/x-www-form-urlencoded"}, "expect": {413}},
        {"name": "depth_at_limit", "path": "/api/v1/sessions/", "body": b"[" * depth + b"]" * depth,
         "expect": {400}, "code_not": "json_too_deep"},
        {"name": "depth_one_over", "path": "/api/v1/sessions/", "body": b"[" * (depth + 1) + b"]" * (depth + 1),
         "expect": {400}, "deep": True},
        {"name": "depth_objects", "path": "/api/v1/sessions/", "body": b'{"a":' * 5000 + b"1" + b"}" * 5000,
         "expect": {400}, "deep": True},
        {"name": "depth_deepest_that_fits", "path": "/api/v1/sessions/", "body": b"[" * deepest + b"]" * deepest,
         "expect": {400}, "deep": True},
        {"name": "depth_unclosed", "path": "/api/v1/memory/records/", "body": b"[" * 100000, "expect": {400},
         "deep": True},
        {"name": "depth_inside_a_string", "path": "/api/v1/sessions/",
         "body": b'{"role": "writer", "metadata": {"note": "' + b"[" * 60 + b'"}}', "expect": {201},
         "code_not": "json_too_deep"},
        {"name": "huge_integer", "path": "/api/v1/sessions/", "body": b'{"role": ' + b"9" * 5000 + b"}",
         "expect": {400}},
        {"name": "infinite_number", "path": f"/api/v1/runs/{run_id}/events/",
         "body": b'{"kind": "x", "data": {"n": 1e999}}', "expect": {400}},
        {"name": "nul_in_text", "path": f"/api/v1/runs/{run_id}/events/",
         "body": b'{"kind": "x", "data": {"n": "a\\u0000b"}}', "expect": {400}},
        {"name": "lone_surrogate", "path": f"/api/v1/runs/{run_id}/events/",
         "body": b'{"kind": "x", "data": {"n": "\\ud800"}}', "expect": {400}},
        {"name": "not_utf8", "path": "/api/v1/sessions/", "body": b'{"role": "\xff\xfe"}', "expect": {400}},
    ]
    for case in cases:
        case.setdefault("headers", {})
        case["headers"] = {**json_type, **case["headers"]}
    return cases


@experiment(13, T13)
def request_limits(quick: bool) -> Result:
    """Each hostile request goes through gunicorn (the real HTTP stack) `repeats` times.

    1. One byte over the body limit (JSON, form, chunked, a lying Content-Length) is refused: 413.
    2. JSON deeper than the nesting limit is 400 `json_too_deep` within a second, up to the deepest
       array that fits in the body limit; nesting inside a string is not nesting.
    3. No response is a 5xx.
    """
    repeats = 1 if quick else 10
    figures: Counter = Counter()
    bad: list[str] = []
    slowest_deep = 0.0
    with sandbox():
        project = new_project("e13")
        session = factories.make_session(project)
        run = factories.make_run(project, session)
        _, approval = waiting_run(project, session, key=f"e13-{project.slug}", arguments={"n": 1})
        _, secret = factories.make_agent_token(project, name=f"e13-{tag()}")
        reviewer = new_user(project, "e13-rev", "reviewer")
        reviewer_secret = factories.make_personal_token(reviewer)[1]
        limit, depth = settings.DATA_UPLOAD_MAX_MEMORY_SIZE, settings.HARNESS_MAX_JSON_DEPTH
        cases = _limit_cases(limit, depth, run.pk, approval.pk)
        with gunicorn("limits") as url:
            for _ in range(repeats):
                for case in cases:
                    token = reviewer_secret if case.get("reviewer") else secret
                    status, payload, seconds = _raw(url, "POST", case["path"], case["body"],
                                                    {**case["headers"], "Authorization": f"Bearer {token}"},
                                                    chunked=case.get("chunked", False))
                    figures["requests"] += 1
                    figures[f"status_{status}"] += 1
                    if status >= 500:
                        figures["server_errors"] += 1
                    if case.get("deep"):
                        slowest_deep = max(slowest_deep, seconds)
                        figures[f"ms_{case['name']}"] = max(figures[f"ms_{case['name']}"], int(seconds * 1000))
                        ok = status == 400 and payload.get("code") == "json_too_deep"
                    else:
                        ok = status in case["expect"] and (
                            "code_not" not in case or payload.get("code") != case["code_not"])
                    if not ok:
                        figures["unexpected"] += 1
                        bad.append(f"{case['name']}: {status} {payload.get('code')}")
    figures["limit_bytes"], figures["max_depth"] = limit, depth
    figures["slowest_deep_ms"] = int(slowest_deep * 1000)
    figures.setdefault("server_errors", 0)
    figures.setdefault("unexpected", 0)
    passed = figures["server_errors"] == 0 and figures["unexpected"] == 0 and slowest_deep < 1.0
    return result(13, T13, quick, passed, dict(figures), notes="; ".join(sorted(set(bad))[:20]))


# --- 14: the OpenAPI schema under schemathesis ------------------------------------------------

T14 = "The OpenAPI schema under schemathesis: no 5xx, no response outside the schema"


@experiment(14, T14)
def schema_fuzz(quick: bool) -> Result:
    """Every operation of the schema (agent, memory and decision endpoints), positive and negative
    examples, through the full WSGI stack with the right principal and real ids half of the time
    (the suite runs its quick form as the whole-schema fuzz; tests/memory_app/test_api_schema.py adds memory cases).
    Checks: no 5xx, documented status codes and content types, bodies that match the schema.
    """
    import schemathesis
    from drf_spectacular.generators import SchemaGenerator
    from hypothesis import strategies as st

    from harness.actors import Actor
    from memory_app.context import context_project
    from memory_app.services import memory_write
    from tests.api.conftest import build_world
    from tests.memory_app.test_api_schema import OPERATOR_ONLY as MEMORY_OPERATOR_ONLY
    from tests.schema_fuzz import fuzzer, real_ids, strategy_for

    examples = ({schemathesis.GenerationMode.POSITIVE: 3, schemathesis.GenerationMode.NEGATIVE: 2} if quick
                else {schemathesis.GenerationMode.POSITIVE: 18, schemathesis.GenerationMode.NEGATIVE: 9})
    figures: Counter = Counter()
    failures: list[str] = []
    calls: list[int] = []
    with sandbox():
        prefix = f"e14-{tag()}"
        world = build_world(new_project("e14"), prefix)
        record = memory_write(project=world.project, actor=Actor.for_agent(f"{prefix}-agent"), scope="project",
                              subject="sea", content="The sea is north.", source_run_id=world.running_run.pk).record
        snapshot = context_project(project=world.project, run_id=world.running_run.pk, budget_chars=500)
        operator = new_user(world.project, "e14-op", "operator")
        auth = {
            "agent": world.agent.headers["HTTP_AUTHORIZATION"],
            "reviewer": world.reviewer.headers["HTTP_AUTHORIZATION"],
            "operator": f"Bearer {factories.make_personal_token(operator)[1]}",
        }
        real = {**real_ids(world), "/api/v1/memory/records/": record.pk if record else 1,
                "/api/v1/memory/context/": snapshot.pk}
        schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
        for found in schema.get_all_operations():
            operation = found.ok()  # type: ignore[union-attr]
            figures["operations"] += 1
            if operation.path.endswith("/decision/"):
                who = "reviewer"
            elif operation.path.startswith("/api/v1/memory/") and operation.path.endswith(MEMORY_OPERATOR_ONLY):
                who = "operator"
            else:
                who = "agent"
            for mode, count in examples.items():
                strategy = strategy_for(operation, mode, real)
                if operation.path.startswith("/api/v1/memory/") and mode == schemathesis.GenerationMode.POSITIVE:
                    pk = next((pk for prefix, pk in real.items()
                               if prefix.startswith("/api/v1/memory/") and operation.path.startswith(prefix + "{id}")),
                              None)
                    if pk is not None:
                        strategy = st.one_of(strategy, operation.as_strategy(generation_mode=mode,
                                                                             path_parameters={"id": str(pk)}))
                try:
                    fuzzer(strategy, count, auth[who], calls)()
                except Exception as exc:  # noqa: BLE001 - every operation's failure is reported together
                    failures.append(f"{operation.method.upper()} {operation.path} [{mode.value}]: "
                                    f"{str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}")
    figures["cases"] = len(calls)
    figures["failing_operations"] = len(failures)
    minimum = 150 if quick else 1000
    passed = figures["cases"] >= minimum and not failures
    return result(14, T14, quick, passed, dict(figures), notes="; ".join(failures[:10]))


# --- 12: console safety -----------------------------------------------------------------------

T12 = "Console safety: CSRF on every state change, GET crawl writes nothing, stored XSS executes nothing"
WRITE_SQL = ("INSERT", "UPDATE", "DELETE")
XSS_MARK = "__xss"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

# Each vector sets window.__xss, opens a dialog, or makes a request to /__xss/... or xss.example
# if the browser ever treats it as markup, script, a URL or an htmx attribute.
XSS_VECTORS = [
    "<script>window.__xss={n}</script>",
    "<img src=x onerror=\"window.__xss={n}\">",
    "<svg onload=window.__xss={n}>",
    "<img src=\"/__xss/img/{n}\">",
    "<iframe srcdoc=\"<script>parent.__xss={n}</script>\"></iframe>",
    "<details open ontoggle=\"window.__xss={n}\">",
    "<input autofocus onfocus=\"window.__xss={n}\">",
    "<div hx-get=\"/__xss/htmx/{n}\" hx-trigger=\"load\">x</div>",
    "<div hx-post=\"/__xss/htmx/{n}\" hx-trigger=\"load\" hx-target=\"body\">x</div>",
    "<div hx-on:htmx:load=\"window.__xss={n}\" hx-get=\"/__xss/on/{n}\" hx-trigger=\"load\">x</div>",
    "<a hx-get=\"/__xss/a/{n}\" hx-trigger=\"load\" hx-vals='js:{{a: window.__xss={n}}}'>x</a>",
    "<link rel=stylesheet href=\"//xss.example/{n}.css\">",
    "<style>@import 'http://xss.example/{n}.css';</style>",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:window.__xss={n}\">",
    "<object data=\"javascript:window.__xss={n}\"></object>",
    "<video><source onerror=\"window.__xss={n}\"></video>",
    "<math><mtext><table><mglyph><style><img src=x onerror=window.__xss={n}>",
    "<noscript><p title=\"</noscript><img src=x onerror=window.__xss={n}>\">",
    "<body onload=window.__xss={n}>",
    "javascript:window.__xss={n}",
    "alert({n})",
    "<script>alert({n})</script>",
    "<img src=x onerror=alert({n})>",
    "{{{{ '{n}' }}}}{{% debug %}}",
    "<form action=\"/__xss/form/{n}\"><button autofocus formaction=\"javascript:window.__xss={n}\">x</button></form>",
]
XSS_WRAPPERS = ["{v}", "\"><{v}", "'>{v}", "</textarea>{v}", "</script>{v}", "</title>{v}", "-->{v}",
                "</pre>{v}", "]]>{v}", "\\u003c{v}"]


def xss_payloads(count: int) -> list[str]:
    """`count` distinct payloads: every vector, then every vector in each breaking-out wrapper."""
    payloads: list[str] = []
    for wrapper in XSS_WRAPPERS:
        for vector in XSS_VECTORS:
            if len(payloads) == count:
                return payloads
            n = len(payloads) + 1
            payloads.append(wrapper.replace("{v}", vector.replace("{n}", str(n)).replace("{{", "{").replace("}}", "}")
                                            if "{{" in vector else vector.format(n=n)))
    while len(payloads) < count:
        n = len(payloads) + 1
        payloads.append(f"<img src=x onerror=\"window.__xss={n}\"> #{n}")
    return payloads


def console_routes() -> list[tuple[str, list[str]]]:
    """(route pattern, its parameter names) for every URL pattern under console.urls."""
    from django.urls import URLPattern, URLResolver

    from console import urls as console_urls

    found: list[tuple[str, list[str]]] = []

    def walk(patterns: list, prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                route = prefix + str(pattern.pattern)
                found.append((route, list(pattern.pattern.converters)))

    walk(console_urls.urlpatterns, "")
    return found


def _rule_of(project: Project, user: Any) -> int:
    """A standing approval of the project, for the crawl's /approvals/standing/<id>/ routes."""
    import datetime as dt

    from harness.actors import Actor
    from runs_app.services.standing_approvals import standing_approval_create

    return standing_approval_create(project=project, actor=Actor.for_user(user), tool="git.push", max_uses=1,
                                    expires_in=dt.timedelta(hours=1)).pk


def _bundle_of(project: Project, run_id: int, user: Any) -> int:
    """An imported bundle the crawl's user may open, for /bundles/<id>/: the scene's run, exported and imported
    by an admin into a second project of the user's (into its own project, the run's refs would be taken)."""
    from bundles_app.services import bundle_export, bundle_import
    from harness.actors import Actor
    from harness.models import Membership

    admin = Actor.for_user(new_user(project, "e12-bundler", "admin"))
    bundle = bundle_export(project=project, actor=admin, kind="run", root_id=run_id)
    imported = bundle_import(bundle=bundle, actor=admin, project_slug=f"{project.slug}-imports")
    Membership.objects.get_or_create(user=user, project=imported.bundle.project)
    return imported.bundle.pk


def _fill(route: str, params: list[str], ids: dict[str, int | str]) -> str:
    path = route
    for name in params:
        for converter in ("int", "slug"):
            path = path.replace(f"<{converter}:{name}>", str(ids[name]))
    return "/" + path


def _csrf_and_crawl(figures: Counter, notes: list[str]) -> None:
    """1. POST every console route as a logged-in reviewer-operator with no CSRF token: 403, no writes.
    2. GET every route (with real ids, plain and as htmx): no INSERT/UPDATE/DELETE, no 5xx."""
    from django.test.utils import CaptureQueriesContext

    from tests.console.scenario import build_scene

    project = new_project("e12-crawl")
    scene = build_scene(project)
    user = new_user(project, "e12-both", "reviewer")
    from django.contrib.auth.models import Group

    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    ids: dict[str, int | str] = {
           "slug": project.slug, "approval_id": scene.approval.pk, "run_id": scene.run.pk, "task_id": scene.task.pk,
           "checkpoint_id": scene.checkpoints[-1].pk, "session_id": scene.session.pk, "record_id": scene.memory.pk,
           "handoff_id": _human_handoff(project), "effect_id": _effect_of(project),
           "token_id": factories.make_personal_token(user)[0].pk,  # the user's own: /profile/tokens/<id>/
           "question_id": scene.question.pk, "rule_id": _rule_of(project, user),
           "bundle_id": _bundle_of(project, scene.run.pk, user), "kind": "run", "root_id": scene.run.pk}
    forms = {"approve": {"version": scene.approval.version}, "reject": {"reason": "no"},
             "edit-approve": {"arguments": "{}", "reason": "x"}, "delete": {"confirm": "on"},
             "edit": {"content": "changed", "version": 1}, "resolve": {"keep": scene.memory.pk, "version": 1},
             "bulk": {"ids": [scene.memory.pk], "action": "delete", "confirm": "on"},
             "review": {"decision": "accept"}, "login": {"username": user.username, "password": "pw-123456"},
             "answer": {"result": "{}"}}
    strict = logged_in(user, csrf_checks=True)
    routes = console_routes()
    figures["console_routes"] = len(routes)
    for route, params in routes:
        path = _fill(route, params, ids)
        data = next((body for verb, body in forms.items() if path.rstrip("/").endswith(verb)), {})
        for htmx in (False, True):
            headers: dict[str, Any] = {"HTTP_HX_REQUEST": "true"} if htmx else {}
            with CaptureQueriesContext(connection) as queries:
                response = strict.post(path, data, **headers)
            writes = [q["sql"][:80] for q in queries if q["sql"].lstrip().upper().startswith(WRITE_SQL)]
            figures["csrf_posts"] += 1
            if response.status_code == 403:
                figures["csrf_refused"] += 1
            else:
                notes.append(f"POST {path} without CSRF: {response.status_code}")
            if writes:
                figures["csrf_posts_that_wrote"] += 1
                notes.append(f"POST {path} without CSRF wrote: {writes[0]}")
    crawler = logged_in(user)
    queries_of_diff = f"?a={scene.checkpoints[0].pk}&b={scene.checkpoints[-1].pk}"
    for route, params in routes:
        path = _fill(route, params, ids) + (queries_of_diff if route.endswith("diff/") else "")
        variants: list[dict[str, Any]] = [{}, {"HTTP_HX_REQUEST": "true"},
                                          {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "main"}]
        for variant in variants:
            with CaptureQueriesContext(connection) as queries:
                response = crawler.get(path, **variant)
            writes = [q["sql"][:80] for q in queries if q["sql"].lstrip().upper().startswith(WRITE_SQL)]
            figures["crawled_gets"] += 1
            figures[f"get_status_{response.status_code}"] += 1
            if response.status_code >= 500:
                figures["get_server_errors"] += 1
            if writes:
                figures["gets_that_wrote"] += 1
                notes.append(f"GET {path} wrote: {writes[0]}")
    # The control: with the token, the same approve POST does decide (CSRF was the only thing refusing it).
    strict.get(f"/approvals/{scene.approval.pk}/")
    token = strict.cookies["csrftoken"].value
    response = strict.post(f"/approvals/{scene.approval.pk}/approve/", {"version": scene.approval.version},
                           HTTP_X_CSRFTOKEN=token)
    scene.approval.refresh_from_db()
    figures["control_with_token_decided"] = int(scene.approval.status == ApprovalStatus.APPROVED)
    for name in ("csrf_posts_that_wrote", "gets_that_wrote", "get_server_errors"):
        figures.setdefault(name, 0)


def _effect_of(project: Project) -> int:
    """An effect of a running run of the project (only a run that may act declares one, issue 30): its page
    (/effects/<id>/) carries the decision forms."""
    from runs_app.services import effect_intend, run_transition

    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to="running", expected_version=None)
    effect, _ = effect_intend(project=project, idempotency_key=f"e12-{project.slug}", tool="publish_chapter",
                              arguments={"chapter": 1}, run_id=run.pk)
    return effect.pk


def _human_handoff(project: Project) -> int:
    """A handoff issued to a human_reviewer session of the project: its page carries the answer form."""
    import datetime as dt

    from django.utils import timezone

    from harness.actors import Actor
    from runs_app.services import handoff_issue, run_transition

    origin = factories.make_run(project)
    run_transition(project=project, run_id=origin.pk, to="running", expected_version=None)
    receiver = factories.make_session(project, role="human_reviewer", memory_policy="none")
    return handoff_issue(project=project, origin_run_id=origin.pk, receiver_session_id=receiver.pk,
                         objective="Is it ready?", inputs=[], allowed_capabilities=[], output_schema={"type": "object"},
                         deadline=timezone.now() + dt.timedelta(hours=1), actor=Actor.for_agent("e12")).pk


def _store_handoff(post: Any, session: dict[str, Any], group: list[str]) -> list[str]:
    """A handoff carrying the payloads (objective, inputs, capabilities, schema, cursor, result), issued by a
    run of the group's session to a human_reviewer session, accepted and returned; the pages that show it."""
    import datetime as dt

    from django.utils import timezone

    from harness.canonical import digest

    first, joined = group[0], "\n".join(group)
    origin = post("/api/v1/runs/", {"session": session["id"]})
    receiver = post("/api/v1/sessions/", {"role": "human_reviewer", "memory_policy": "none", "ref": group[-1][:64]})
    if origin is None or receiver is None:
        return []
    post(f"/api/v1/runs/{origin['id']}/transition/", {"to": "running", "expected_version": origin["version"]})
    handoff = post(f"/api/v1/runs/{origin['id']}/handoffs/", {
        "receiver_session": receiver["id"], "objective": joined, "cursor": {"node": first},
        "inputs": [{"name": f"{i} {p[:100]}", "fingerprint": digest(p), "value": p} for i, p in enumerate(group)],
        "allowed_capabilities": [p[:120] for p in group[:3]],
        "output_schema": {"type": "object", "description": joined},
        "deadline": (timezone.now() + dt.timedelta(hours=1)).isoformat()})
    if handoff is None:
        return [f"/runs/{origin['id']}/"]
    worker = post("/api/v1/runs/", {"session": receiver["id"]})
    if worker is not None:
        post(f"/api/v1/handoffs/{handoff['id']}/accept/", {"run": worker["id"]})
        post(f"/api/v1/handoffs/{handoff['id']}/return/", {"packet_fingerprint": handoff["packet_fingerprint"],
                                                            "result": {"text": joined, first[:60]: [first]}})
    return [f"/handoffs/{handoff['id']}/", f"/runs/{origin['id']}/"]


def _store_payloads(payloads: list[str], group_size: int, figures: Counter) -> tuple[list[str], User]:
    """Post the payloads as an agent through the API into every field the console shows; return the pages."""
    project = new_project("e12-xss")
    _, secret = factories.make_agent_token(project, name=f"e12-{tag()}")
    agent = Client()
    headers = bearer(secret)

    def post(path: str, body: Any) -> Any:
        response = agent.post(path, body, content_type="application/json", **headers)
        figures["api_writes"] += 1
        figures["api_writes_stored" if response.status_code < 300 else "api_writes_refused"] += 1
        return response.json() if response.status_code < 300 else None

    pages = ["/", "/approvals/", "/sessions/", "/memory/", "/memory/held/", "/approvals/?risk=high"]
    for start in range(0, len(payloads), group_size):
        group = payloads[start:start + group_size]
        first, joined = group[0], "\n".join(group)
        session = post("/api/v1/sessions/", {"role": "writer", "memory_policy": "session", "ref": first[:64],
                                             "metadata": {"note": joined}})
        task = post("/api/v1/tasks/", {"objective": joined, "plan": [p[:120] for p in group[:3]],
                                       "artifact_refs": {"draft": {"content": joined}}})
        assert session is not None and task is not None, "the API refused a plain session or task"
        run = post("/api/v1/runs/", {"session": session["id"], "task": task["id"], "ref": first[-64:],
                                     "active_agent": first[:120], "cursor": {"node": first}})
        if run is None:
            run = post("/api/v1/runs/", {"session": session["id"], "task": task["id"]})
        assert run is not None
        post(f"/api/v1/runs/{run['id']}/transition/", {"to": "running", "expected_version": run["version"]})
        post(f"/api/v1/sessions/{session['id']}/items/",
             {"items": [{"role": "assistant", "content": {"text": p, p[:60]: p}, "run": run["id"]} for p in group]})
        for p in group:
            post(f"/api/v1/runs/{run['id']}/events/", {"kind": p[:64], "data": {"text": p, p[:60]: [p]}})
        checkpoint = post("/api/v1/checkpoints/", {"run": run["id"], "label": first[:120], "cursor": {"node": first},
                                                   "state": {f"p{i}": p for i, p in enumerate(group)}})
        post("/api/v1/effects/", {"idempotency_key": f"e12-{tag()}", "tool": first[:120], "run": run["id"],
                                  "arguments": {"text": joined}})
        records = [post("/api/v1/memory/records/", {"scope": "project", "subject": p[:200], "content": f"{p} ({i})",
                                                    "source_run_id": run["id"]}) for i, p in enumerate(group)]
        approval = post(f"/api/v1/runs/{run['id']}/approvals/", {
            "tool": first[:120], "arguments": {**{f"p{i}": p for i, p in enumerate(group)}, first[:80]: first},
            "idempotency_key": f"e12-{tag()}", "reason": joined})
        if approval is None:
            approval = post(f"/api/v1/runs/{run['id']}/approvals/", {
                "tool": "publish", "arguments": {f"p{i}": p for i, p in enumerate(group)},
                "idempotency_key": f"e12-{tag()}", "reason": joined})
        pages += [f"/sessions/{session['id']}/", f"/runs/{run['id']}/", f"/runs/{run['id']}/lineage/",
                  f"/tasks/{task['id']}/lineage/"]
        pages += _store_handoff(post, session, group)
        if approval:
            pages.append(f"/approvals/{approval['id']}/")
        if checkpoint:
            pages.append(f"/checkpoints/{checkpoint['id']}/")
        pages += [f"/memory/{r['record']['id']}/" for r in records[:2] if r and r.get("record")]
        pages += [f"/memory/{r['record']['id']}/edit/" for r in records[:1] if r and r.get("record")]
    viewer = new_user(project, "e12-viewer", "reviewer")
    from django.contrib.auth.models import Group

    viewer.groups.add(Group.objects.get_or_create(name="operator")[0])
    return pages, viewer


def _in_own_thread(fn: Any, *args: Any) -> None:
    """Run fn in a fresh thread: Playwright's sync API refuses a thread whose asyncio loop is running,
    as pytest-playwright's is once the browser tests ran earlier in the same session."""
    failure: list[BaseException] = []

    def target() -> None:
        try:
            fn(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=target, name="chromium-xss")
    thread.start()
    thread.join(600)
    if thread.is_alive():
        raise TimeoutError("the Chromium rendering did not finish in 600 s")
    if failure:
        raise failure[0]


def _render_in_chromium(url: str, pages: list[str], cookie: str, figures: Counter, notes: list[str]) -> None:
    """Load every page in headless Chromium: no window.__xss, no dialog, no request to /__xss or elsewhere."""
    from playwright.sync_api import sync_playwright

    dialogs: list[str] = []
    stray: list[str] = []
    htmx_requests: list[str] = []

    def on_request(request: Any) -> None:
        figures["browser_requests"] += 1
        if request.headers.get("hx-request"):
            htmx_requests.append(request.url)
        if XSS_MARK in request.url or "xss.example" in request.url or not request.url.startswith(url):
            stray.append(request.url)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context()
            context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": url}])
            context.on("request", on_request)
            page = context.new_page()
            def on_dialog(dialog: Any) -> None:
                dialogs.append(dialog.message)
                dialog.dismiss()

            page.on("dialog", on_dialog)
            page.set_default_timeout(15000)
            for path in pages:
                response = page.goto(url + path, wait_until="load")
                page.wait_for_timeout(250)
                figures["pages_rendered"] += 1
                status = response.status if response else 0
                if status != 200:
                    figures["pages_not_200"] += 1
                    notes.append(f"{path}: {status}")
                if page.evaluate("() => typeof window.htmx === 'object'"):
                    figures["pages_with_htmx"] += 1
                marker = page.evaluate(f"() => window.{XSS_MARK} === undefined ? null : String(window.{XSS_MARK})")
                if marker is not None:
                    figures["pages_with_xss_marker"] += 1
                    notes.append(f"{path}: window.__xss = {marker}")
            # The control: markup inserted as HTML (what a missing escape would do) is caught by these probes.
            before = len(stray)
            page.evaluate("""() => { const d = document.createElement('div');
                d.innerHTML = '<img src=x onerror="window.__xss=0">'
                    + '<div hx-get="/__xss/control" hx-trigger="load"></div>';
                document.body.appendChild(d); htmx.process(d); }""")
            page.wait_for_timeout(500)
            caught = page.evaluate(f"() => window.{XSS_MARK} === 0") and len(stray) > before
            figures["detector_control_caught"] = int(bool(caught))
            stray[before:] = []
        finally:
            browser.close()
    figures["dialogs"] = len(dialogs)
    figures["stray_requests"] = len(stray)
    figures["htmx_requests_seen"] = len(htmx_requests)
    notes.extend(f"request {u}" for u in stray[:5])
    notes.extend(f"dialog {m}" for m in dialogs[:5])

@experiment(12, T12)
def console_safety(quick: bool) -> Result:
    """1. CSRF: every console route POSTed without a token is refused (403) and writes nothing.
    2. Crawl: every GET route with real ids (plain, htmx, htmx with a target) writes nothing.
    3. XSS: payloads stored by an agent through the API (item content, event data, approval
       arguments and reason, memory content and subject, run refs, checkpoint labels and state,
       task objectives, effect tools) are rendered by gunicorn into headless Chromium: no
       window.__xss, no dialog, no request to /__xss or another origin (htmx included).
    """
    count = 50 if quick else 500
    group_size = 25 if quick else 50
    figures: Counter = Counter()
    notes: list[str] = []
    with sandbox():
        _csrf_and_crawl(figures, notes)
        payloads = xss_payloads(count)
        figures["payloads"] = len(payloads)
        pages, viewer = _store_payloads(payloads, group_size, figures)
        client = logged_in(viewer)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        with gunicorn("console") as url:
            _in_own_thread(_render_in_chromium, url, pages, cookie, figures, notes)
    for name in ("pages_with_xss_marker", "dialogs", "stray_requests", "pages_not_200"):
        figures.setdefault(name, 0)
    passed = (
        figures["csrf_refused"] == figures["csrf_posts"] > 0 and figures["csrf_posts_that_wrote"] == 0
        and figures["gets_that_wrote"] == 0 and figures["get_server_errors"] == 0
        and figures["control_with_token_decided"] == 1
        and figures["pages_rendered"] == len(pages) and figures["pages_not_200"] == 0
        and figures["pages_with_xss_marker"] == 0 and figures["dialogs"] == 0 and figures["stray_requests"] == 0
        and figures["detector_control_caught"] == 1
    )
    return result(12, T12, quick, passed, dict(figures), notes="; ".join(notes[:20]))

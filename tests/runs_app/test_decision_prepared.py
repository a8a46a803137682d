"""A decision without an edit is one prepared UPDATE (runs_app.services.approvals._decide_prepared, issue 14); it
must decide exactly what the ORM's conditional write decides, and refuse exactly what it refuses, with the same
answer. Each case runs twice on twin fixtures: once as it runs in production, once with the prepared statement
switched off (the ORM's `cas_transition_row` path, which the prepared one replaced for these decisions)."""

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from harness.actors import Actor
from harness.http.errors import DomainError
from harness.models import Membership, Project
from runs_app.models import ApprovalRequest
from runs_app.services import approval_decide, approval_request_create, approvals, run_transition
from tests import factories

CASES = [
    "global_reviewer_approves", "member_reviewer_approves", "member_without_the_role", "frozen_project",
    "stale_version", "current_version", "changed_fingerprint", "shown_fingerprint", "expired", "not_yet_expired",
    "self_approval", "rejection", "among_project_ids", "not_among_project_ids", "already_decided",
]


def _case(case: str, tag: str) -> tuple[dict[str, Any], int]:
    """The decision's arguments for `case` on fresh rows named by `tag`; and the approval's id."""
    project = factories.make_project(f"{tag}-p")
    other = factories.make_project(f"{tag}-o")
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to="running", expected_version=run.version)
    expires = None
    if case in ("expired", "not_yet_expired"):
        expires = timezone.now() + dt.timedelta(hours=-1 if case == "expired" else 1)
    approval = approval_request_create(project=project, run_id=run.pk, tool="publish", arguments={"ch": 3},
                                       idempotency_key=f"{tag}-key", actor=Actor.for_agent("agent"))
    if expires is not None:
        ApprovalRequest.objects.filter(pk=approval.pk).update(expires_at=expires)
    if case == "member_reviewer_approves":
        user = factories.make_user(f"{tag}-m")
        Membership.objects.create(user=user, project=project, roles=["reviewer"])
    elif case == "member_without_the_role":  # a reviewer, but only in the other project
        user = factories.make_user(f"{tag}-m")
        Membership.objects.create(user=user, project=project, roles=[])
        Membership.objects.create(user=user, project=other, roles=["reviewer"])
    else:
        user = factories.make_user(f"{tag}-r", role="reviewer", projects=[project, other])
    actor = Actor.for_user(user)
    kwargs: dict[str, Any] = {"project": project, "approval_id": approval.pk, "actor": actor, "decision": "approve"}
    if case == "frozen_project":
        Project.objects.filter(pk=project.pk).update(frozen_at=timezone.now())
        kwargs["project"] = Project.objects.get(pk=project.pk)
    elif case == "stale_version":
        kwargs["expected_version"] = approval.version + 1
    elif case == "current_version":
        kwargs["expected_version"] = approval.version
    elif case == "changed_fingerprint":
        kwargs["expected_fingerprint"] = "0" * 64
    elif case == "shown_fingerprint":
        kwargs["expected_fingerprint"] = approval.action_fingerprint
    elif case == "self_approval":
        ApprovalRequest.objects.filter(pk=approval.pk).update(requested_by=actor.label)
    elif case == "rejection":
        kwargs.update(decision="reject", reason="  too risky ")
    elif case in ("among_project_ids", "not_among_project_ids"):
        del kwargs["project"]
        kwargs["project_ids"] = [other.pk, project.pk] if case == "among_project_ids" else [other.pk]
    elif case == "already_decided":
        first = factories.make_user(f"{tag}-first", role="reviewer", projects=[project])
        approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(first), decision="reject",
                        reason="no")
    return kwargs, approval.pk


def _outcome(kwargs: dict[str, Any], approval_id: int) -> tuple[Any, ...]:
    try:
        decided = approval_decide(**kwargs)
    except DomainError as exc:
        row = ApprovalRequest.objects.get(pk=approval_id)
        # The twins differ only in names (and the time of a first decision): compared without them.
        extra = {k: v.rsplit("-", 1)[1] if k == "decided_by" else v for k, v in exc.extra.items() if k != "decided_at"}
        return ("refused", type(exc).__name__, exc.code, extra, row.status, row.version)
    row = ApprovalRequest.objects.get(pk=approval_id)
    assert (decided.status, decided.version, decided.approved_fingerprint) == (
        row.status, row.version, row.approved_fingerprint)
    return ("decided", row.status, row.version, row.decided_by.username.rsplit("-", 1)[1], row.decision_reason,
            row.approved_arguments, row.approved_fingerprint == row.action_fingerprint, bool(row.approved_fingerprint),
            row.decided_at is not None)


@pytest.mark.django_db
@pytest.mark.parametrize("case", CASES)
def test_the_prepared_decision_decides_and_refuses_as_the_orm_write(case, monkeypatch):
    from worker import tasks

    monkeypatch.setattr(tasks, "enqueue_resume", lambda run_id: None)
    kwargs, approval_id = _case(case, "prep")
    wrote: list[ApprovalRequest | None] = []
    prepared_write = approvals._decide_prepared
    with monkeypatch.context() as m:
        m.setattr(approvals, "_decide_prepared", lambda **kw: wrote.append(prepared_write(**kw)) or wrote[-1])
        prepared = _outcome(kwargs, approval_id)
    with monkeypatch.context() as m:
        m.setattr(approvals, "_decide_prepared", lambda **kw: None)
        kwargs, approval_id = _case(case, "orm")
        orm = _outcome(kwargs, approval_id)
    assert prepared == orm
    # The prepared statement decided each decision that stood (the ORM's write never ran for it), and refused each
    # one that was refused (the ORM's write then said why).
    assert len(wrote) == 1 and (wrote[0] is not None) == (prepared[0] == "decided"), wrote


@pytest.mark.django_db
def test_an_edit_still_takes_the_orm_write(project, monkeypatch):
    from worker import tasks

    monkeypatch.setattr(tasks, "enqueue_resume", lambda run_id: None)
    kwargs, approval_id = _case("global_reviewer_approves", "edit")
    called = []
    monkeypatch.setattr(approvals, "_decide_prepared", lambda **kw: called.append(kw))
    decided = approval_decide(**{**kwargs, "reason": "chapter 4"}, edited_arguments={"ch": 4})
    assert called == [] and decided.approved_arguments == {"ch": 4}

import pytest
from django.db import IntegrityError, transaction

from harness.actors import Actor
from harness.canonical import action_fingerprint, digest
from harness.http.errors import ConflictError, Forbidden, ValidationFailed
from harness.models import AuditEntry
from runs_app.models import ApprovalRequest, ExternalEffect, Run
from runs_app.services import (
    approval_decide,
    approval_request_create,
    effect_deliver,
    effect_intend,
    run_transition,
)
from tests import factories


def _running_run(project):
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to="running", expected_version=run.version)
    return run


@pytest.mark.django_db
def test_same_result_twice_is_consumed_once_with_one_receipt(project):
    run = _running_run(project)
    effect_intend(project=project, idempotency_key="send-1", tool="mail", arguments={"to": "x"}, run_id=run.pk)
    first = effect_deliver(project=project, idempotency_key="send-1", result={"id": 7})
    again = effect_deliver(project=project, idempotency_key="send-1", result={"id": 7},
                           result_hash=digest({"id": 7}))
    assert (first.outcome, again.outcome) == ("consumed", "already_consumed")
    assert first.receipt and again.receipt == first.receipt
    assert ExternalEffect.objects.get(idempotency_key="send-1").status == "consumed"


@pytest.mark.django_db
def test_a_different_result_for_the_same_key_is_a_hard_stop(project):
    run = _running_run(project)
    effect_intend(project=project, idempotency_key="send-2", tool="mail", run_id=run.pk)
    effect_deliver(project=project, idempotency_key="send-2", result={"id": 7})
    clash = effect_deliver(project=project, idempotency_key="send-2", result={"id": 8})
    assert clash.outcome == "conflict"
    effect = ExternalEffect.objects.get(idempotency_key="send-2")
    assert (effect.status, effect.conflicting_hash) == ("conflict", digest({"id": 8}))
    run.refresh_from_db()
    assert (run.status, run.blocked_step) == ("blocked", "effect_conflict")


@pytest.mark.django_db
def test_a_wrong_client_hash_is_refused(project):
    effect_intend(project=project, idempotency_key="k", tool="t")
    with pytest.raises(ValidationFailed):
        effect_deliver(project=project, idempotency_key="k", result=1, result_hash="0" * 64)
    assert ExternalEffect.objects.get(idempotency_key="k").status == "intended"


@pytest.mark.django_db
def test_an_idempotency_key_names_one_action(project):
    effect, created = effect_intend(project=project, idempotency_key="k", tool="t", arguments={"a": 1})
    again, created_again = effect_intend(project=project, idempotency_key="k", tool="t", arguments={"a": 1})
    assert (created, created_again, again.pk) == (True, False, effect.pk)
    with pytest.raises(ConflictError) as caught:
        effect_intend(project=project, idempotency_key="k", tool="t", arguments={"a": 2})
    assert caught.value.code == "idempotency_key_reused"


@pytest.mark.django_db
def test_posting_an_approval_moves_the_run_to_waiting(project):
    run = _running_run(project)
    approval = approval_request_create(project=project, run_id=run.pk, tool="publish", arguments={"ch": 3},
                                       idempotency_key="pub-3", actor=Actor.for_agent("writer"))
    run.refresh_from_db()
    assert run.status == "waiting_approval" and run.pending_approval_id == approval.pk
    assert approval.action_fingerprint == action_fingerprint("publish", {"ch": 3})


@pytest.mark.django_db
def test_a_failed_run_transition_leaves_no_approval(project):
    run = factories.make_run(project)  # created: cannot wait for approval
    with pytest.raises(ConflictError):
        approval_request_create(project=project, run_id=run.pk, tool="publish", arguments={},
                                idempotency_key="k", actor=Actor.for_agent("agent"))
    assert not ApprovalRequest.objects.exists()


@pytest.mark.django_db
def test_decisions_need_a_reviewer_who_is_not_the_requester(project, django_capture_on_commit_callbacks):
    run = _running_run(project)
    approval = approval_request_create(project=project, run_id=run.pk, tool="publish", arguments={"ch": 3},
                                       idempotency_key="pub", actor=Actor.for_agent("agent"))
    operator = factories.make_user("olga", role="operator", projects=[project])
    outsider = factories.make_user("rex", role="reviewer")
    with pytest.raises(Forbidden):
        approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(operator), decision="approve")
    from harness.http.errors import NotFoundError

    with pytest.raises(NotFoundError):
        approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(outsider), decision="approve")
    requester = factories.make_user("rita", role="reviewer", projects=[project])
    ApprovalRequest.objects.filter(pk=approval.pk).update(requested_by=Actor.for_user(requester).label)
    with pytest.raises(Forbidden) as caught:
        approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(requester), decision="approve")
    assert caught.value.code == "self_approval"
    assert ApprovalRequest.objects.get(pk=approval.pk).status == "pending"


@pytest.mark.django_db
def test_edit_and_approve_records_the_new_fingerprint_and_audits(project, monkeypatch):
    from worker import tasks

    queued = []
    monkeypatch.setattr(tasks, "enqueue_resume", queued.append)
    run = _running_run(project)
    approval = approval_request_create(project=project, run_id=run.pk, tool="publish", arguments={"ch": 3},
                                       idempotency_key="pub", actor=Actor.for_agent("agent"))
    reviewer = factories.make_user("rev", role="reviewer", projects=[project])
    with transaction.atomic():
        decided = approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(reviewer),
                                  decision="approve", reason="chapter 4 is next",
                                  edited_arguments={"ch": 4})
    assert decided.status == "approved"
    assert decided.approved_fingerprint == action_fingerprint("publish", {"ch": 4}) != decided.action_fingerprint
    entry = AuditEntry.objects.get(target_id=str(approval.pk))
    assert entry.actor == "user:rev" and entry.data["edited"] is True
    with pytest.raises(IntegrityError), transaction.atomic():
        AuditEntry.objects.filter(pk=entry.pk).update(actor="someone else")


@pytest.mark.django_db
def test_rejection_needs_a_reason_and_a_second_decision_names_the_first(project, monkeypatch):
    from worker import tasks

    monkeypatch.setattr(tasks, "enqueue_resume", lambda run_id: None)
    run = _running_run(project)
    approval = approval_request_create(project=project, run_id=run.pk, tool="publish", arguments={},
                                       idempotency_key="pub", actor=Actor.for_agent("agent"))
    ann = factories.make_user("ann", role="reviewer", projects=[project])
    bob = factories.make_user("bob", role="reviewer", projects=[project])
    with pytest.raises(ValidationFailed):
        approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(ann), decision="reject",
                        reason="  ")
    approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(ann), decision="reject",
                    reason="too risky")
    with pytest.raises(ConflictError) as caught:
        approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(bob), decision="approve")
    assert caught.value.code == "already_decided" and caught.value.extra["decided_by"] == "ann"
    assert Run.objects.get(pk=run.pk).status == "waiting_approval"


@pytest.mark.django_db
def test_a_decision_that_lands_after_the_expiry_pass_is_told_it_expired(project, monkeypatch):
    # The recovery pass expired it first (experiment 22's race, in order): the reviewer is told why, and the
    # approval keeps the expiry's outcome and no decider.
    import datetime as dt

    from django.utils import timezone

    from runs_app.services import approval_expire_due
    from worker import tasks

    monkeypatch.setattr(tasks, "enqueue_resume", lambda run_id: None)
    run = _running_run(project)
    approval = approval_request_create(project=project, run_id=run.pk, tool="publish", arguments={},
                                       idempotency_key="late", actor=Actor.for_agent("agent"),
                                       expires_at=timezone.now() + dt.timedelta(seconds=1))
    assert approval_expire_due(now=timezone.now() + dt.timedelta(seconds=2)) == [approval.pk]
    ann = factories.make_user("ann", role="reviewer", projects=[project])
    with pytest.raises(ConflictError) as caught:
        approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(ann), decision="approve")
    assert (caught.value.code, caught.value.extra["current_status"]) == ("approval_expired", "expired")
    approval.refresh_from_db()
    assert (approval.status, approval.decided_by_id) == ("expired", None)

"""Standing approvals with a real `celery worker` process (issue 33, part 2): a rule's approval is resumed by the
worker and the tool called once; a rule revoked between its approval and the resume leaves the tool uncalled and
the run waiting for a person, whose approval the worker then carries out, once."""

import datetime as dt

import pytest

from harness.actors import Actor
from runs_app.models import ApprovalOutcome, ApprovalRequest, ApprovalStatus, Run, RunStatus
from runs_app.services import approval_decide
from runs_app.services.standing_approvals import standing_approval_create, standing_approval_revoke
from tests import factories
from tests.worker.support import demo_run, reviewer, wait_for, wait_status

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _rule_for(project, user):  # type: ignore[no-untyped-def]
    return standing_approval_create(project=project, actor=Actor.for_user(user), tool="publish_chapter",
                                    max_uses=1, expires_in=dt.timedelta(hours=1), agent="writer-1")


def test_the_worker_carries_out_a_rule_s_approval_once(workers, fake_service) -> None:  # type: ignore[no-untyped-def]
    project = factories.make_project("novelforge")
    _rule_for(project, reviewer(project))
    workers.start("a")

    run = demo_run(project)  # asked, and approved by the rule in the same transaction

    approval = ApprovalRequest.objects.get(run=run)
    assert approval.standing_approval_id is not None and approval.status == ApprovalStatus.APPROVED
    wait_status(run.pk, RunStatus.SUCCEEDED)
    assert fake_service.executions[approval.idempotency_key] == 1


def test_revoked_before_the_worker_resumes_the_run_waits_for_a_person(  # type: ignore[no-untyped-def]
        workers, fake_service) -> None:
    project = factories.make_project("novelforge")
    rita, sam = reviewer(project), reviewer(project, "sam")
    rule = _rule_for(project, rita)
    run = demo_run(project)  # approved by the rule; no worker runs yet
    first = ApprovalRequest.objects.get(run=run)
    standing_approval_revoke(project=project, rule_id=rule.pk, actor=Actor.for_user(sam))

    workers.start("a")  # takes the queued resume message (or the recovery pass finds the run)

    again = wait_for(lambda: ApprovalRequest.objects.filter(run=run, status=ApprovalStatus.PENDING).first(),
                     what="a person to be asked again")
    first.refresh_from_db()
    assert first.outcome == ApprovalOutcome.NOT_RUN
    assert Run.objects.get(pk=run.pk).status == RunStatus.WAITING_APPROVAL
    assert fake_service.requests == {}  # the tool was never called

    approval_decide(project=project.pk, approval_id=again.pk, actor=Actor.for_user(sam), decision="approve")

    wait_status(run.pk, RunStatus.SUCCEEDED)
    assert fake_service.executions[again.idempotency_key] == 1
    assert sum(fake_service.requests.values()) == 1

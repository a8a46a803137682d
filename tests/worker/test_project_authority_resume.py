"""The resume's authority step asks the project as it is now (issues 16.5 and 17.4): a frozen project's approved
run is blocked at `authority_lease` naming `project_frozen` and calls nothing; a per-project reviewer's approval
authorizes the call only while the membership still names the role."""

import pytest
from django.test import override_settings

from harness.actors import Actor
from harness.models import Membership
from harness.projects import project_freeze
from runs_app.models import ExternalEffect, Run, RunStatus
from tests import factories
from tests.worker.support import approve, demo_run, keyed_adapters
from worker.pipeline import resume_run_by_id

OWNER = "worker:test:authority"
pytestmark = pytest.mark.django_db


def _project_reviewer(run: Run) -> Membership:
    user = factories.make_user("paula")
    return Membership.objects.create(user=user, project=run.project, roles=["reviewer"])


def test_an_approved_run_in_a_frozen_project_is_blocked_at_authority_and_calls_nothing(fake_service) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    key = run.pending_approval.idempotency_key
    approve(run, _project_reviewer(run).user)
    admin = factories.make_user("ada", role="admin", projects=[run.project])
    project_freeze(project=run.project, actor=Actor.for_user(admin), reason="incident")

    with override_settings(HARNESS_TOOL_ADAPTERS=keyed_adapters(fake_service)):
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert (run.status, run.blocked_step, run.failure_category) == (RunStatus.BLOCKED, "authority_lease", "permission")
    assert "project_frozen" in run.error["reason"]
    assert fake_service.requests[key] == 0  # the tool was never called
    assert not ExternalEffect.objects.filter(run=run).exclude(status="intended").exists()


def test_a_per_project_reviewers_approval_authorizes_the_call(fake_service) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    key = run.pending_approval.idempotency_key
    approve(run, _project_reviewer(run).user)

    with override_settings(HARNESS_TOOL_ADAPTERS=keyed_adapters(fake_service)):
        resume_run_by_id(run.pk, owner=OWNER)

    run.refresh_from_db()
    assert run.status != RunStatus.BLOCKED, run.error
    assert fake_service.requests[key] == 1


def test_a_reviewer_whose_membership_lost_the_role_after_approving_does_not_authorize_the_call(fake_service) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    key = run.pending_approval.idempotency_key
    membership = _project_reviewer(run)
    approve(run, membership.user)
    Membership.objects.filter(pk=membership.pk).update(roles=[])

    with override_settings(HARNESS_TOOL_ADAPTERS=keyed_adapters(fake_service)):
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert run.blocked_step == "authority_lease" and "no longer holds the reviewer role" in run.error["reason"]
    assert fake_service.requests[key] == 0

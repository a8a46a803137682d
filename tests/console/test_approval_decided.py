"""The inbox's "recently decided" list (issue 32, part 3): what each reviewer changed, in the row."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from harness.actors import Actor
from runs_app.models import ApprovalRequest
from runs_app.services import approval_decide
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db


def _edit_approve(scene: Scene, reviewer) -> ApprovalRequest:  # type: ignore[no-untyped-def]
    asked = scene.approval
    edited = {**asked.arguments, "branch": "fix/login-2"}
    return approval_decide(project=scene.project, approval_id=asked.pk, actor=Actor.for_user(reviewer),
                           decision="approve", reason="push the rebased branch", edited_arguments=edited)


def test_a_decided_row_shows_who_why_and_the_arguments_diff(  # type: ignore[no-untyped-def]
        scene: Scene, reviewer, reviewer_client) -> None:
    before = reviewer_client.get(reverse("runs:approval_decided")).content.decode()
    assert f'data-approval="{scene.approval.pk}"' not in before  # pending: the inbox's, not this list's
    decided = _edit_approve(scene, reviewer)
    page = reviewer_client.get(reverse("runs:approval_decided")).content.decode()
    assert f'class="decided-row" data-approval="{decided.pk}"' in page
    assert 'data-path="branch" data-kind="changed"' in page and "fix/login-2" in page
    assert "push the rebased branch" in page and reviewer.username in page


def test_old_decisions_and_other_projects_are_not_listed(  # type: ignore[no-untyped-def]
        scene: Scene, other_scene: Scene, reviewer, client_for) -> None:
    from tests import factories

    decided = _edit_approve(scene, reviewer)
    outsider = factories.make_user("olaf", role="reviewer", projects=[other_scene.project])
    assert f'data-approval="{decided.pk}"' not in client_for(outsider).get(
        reverse("runs:approval_decided")).content.decode()
    ApprovalRequest.objects.filter(pk=decided.pk).update(decided_at=timezone.now() - dt.timedelta(days=8))
    assert f'data-approval="{decided.pk}"' not in client_for(reviewer).get(
        reverse("runs:approval_decided")).content.decode()

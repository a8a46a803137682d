"""Each reviewer's queue (issue 33, part 5): "My queue" lists what the user may decide now as the policies route it
(their groups' requests and those no group narrows; not another group's, not an escalated one routed away from
them, not their own), and an escalated request says where it went in the inbox and on its page."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from harness.actors import Actor
from runs_app.models import ApprovalPolicy, ApprovalRequest, ExpiryAction, ReviewerGroup, RunStatus
from runs_app.services import approval_expire_due, approval_request_create, run_transition
from tests import factories

pytestmark = pytest.mark.django_db


def _ask(project, tool: str, asker: Actor | None = None) -> ApprovalRequest:  # type: ignore[no-untyped-def]
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool=tool, arguments={"n": 1},
                                   idempotency_key=f"{tool}-{run.pk}", actor=asker or Actor.for_agent("bot"))


def _policy(project, tool: str, group: ReviewerGroup, **kwargs) -> ApprovalPolicy:  # type: ignore[no-untyped-def]
    policy = ApprovalPolicy.objects.create(project=project, tool=tool, version=1, **kwargs)
    policy.eligible_groups.set([group])
    return policy


def test_my_queue_holds_what_is_mine_to_decide(project, reviewer, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    editors, finance = (ReviewerGroup.objects.create(project=project, name=n) for n in ("editors", "finance"))
    editors.members.add(reviewer)
    _policy(project, "publish", editors)
    _policy(project, "wire", finance)
    mine, theirs, anyones = _ask(project, "publish"), _ask(project, "wire"), _ask(project, "note")
    own = _ask(project, "note", asker=Actor.for_user(reviewer))

    queue = reviewer_client.get(reverse("runs:approval_inbox") + "?queue=mine").content.decode()
    everyone = reviewer_client.get(reverse("runs:approval_inbox")).content.decode()

    assert 'id="tab-queue" aria-current="page"' in queue
    for approval, shown in ((mine, True), (anyones, True), (theirs, False), (own, False)):
        assert (f'data-approval="{approval.pk}"' in queue) is shown, approval.tool
        assert f'data-approval="{approval.pk}"' in everyone


def test_an_escalated_request_leaves_the_first_group_s_queue_and_says_where_it_went(  # type: ignore[no-untyped-def]
        project, reviewer, reviewer_client) -> None:
    desk, managers = (ReviewerGroup.objects.create(project=project, name=n) for n in ("desk", "managers"))
    desk.members.add(reviewer)
    _policy(project, "wire", desk, expires_after=dt.timedelta(hours=1), on_expiry=ExpiryAction.ESCALATE,
            escalate_to=managers)
    asked = _ask(project, "wire")
    inbox = reverse("runs:approval_inbox") + "?queue=mine"
    assert f'data-approval="{asked.pk}"' in reviewer_client.get(inbox).content.decode()

    approval_expire_due(now=timezone.now() + dt.timedelta(hours=2))

    assert f'data-approval="{asked.pk}"' not in reviewer_client.get(inbox).content.decode()
    everyone = reviewer_client.get(reverse("runs:approval_inbox")).content.decode()
    assert "escalated to managers" in everyone
    page = reviewer_client.get(reverse("runs:approval_detail", args=[asked.pk])).content.decode()
    assert 'id="routed-to"' in page and ">managers<" in page

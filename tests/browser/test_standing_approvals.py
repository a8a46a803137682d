"""Standing approvals in Chromium (issue 33, part 2): a reviewer clicks "Approve and don't ask again", the next
matching request is approved without anyone, the rule's uses run out and a person is asked again; a reviewer
revokes another rule on the standing approvals page and it approves nothing more."""

import datetime as dt

import pytest
from playwright.sync_api import Page, expect

from demo.scenario import DEMO_ACTION, demo_scenario_create
from harness.actors import Actor
from runs_app.models import ApprovalRequest, ApprovalStatus, RunStatus, StandingApproval
from runs_app.services import approval_request_create, run_transition
from runs_app.services.standing_approvals import standing_approval_create
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _ask_again(project, tool: str = "publish_chapter") -> ApprovalRequest:  # type: ignore[no-untyped-def]
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool=tool, arguments=dict(DEMO_ACTION),
                                   idempotency_key=f"again-{run.pk}", actor=Actor.for_agent("writer-1"))


def test_approve_and_don_t_ask_again_then_uses_run_out(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    project = factories.make_project("novelforge")
    run = demo_scenario_create(project=project)
    approval = ApprovalRequest.objects.get(run=run, status=ApprovalStatus.PENDING)
    factories.make_user("ann", role="reviewer", projects=[project])
    login(page, "ann")

    page.goto(f"{live_server.url}/approvals/{approval.pk}/")
    page.click("#standing-offer summary")
    page.fill("input[name=standing_hours]", "2")
    page.fill("input[name=standing_uses]", "1")
    shot(page, "standing-offer")
    page.click("#approve-standing")
    expect(page.locator("#decided-by")).to_have_text("ann")

    rule = StandingApproval.objects.get(project=project)
    assert (rule.agent, rule.max_uses, rule.match_arguments) == ("agent:writer-1", 1, DEMO_ACTION)
    assert dt.timedelta(hours=1, minutes=59) < rule.expires_at - rule.created_at <= dt.timedelta(hours=2)
    covered = _ask_again(project)
    assert (covered.status, covered.standing_approval_id) == (ApprovalStatus.APPROVED, rule.pk)
    assert _ask_again(project).status == ApprovalStatus.PENDING  # its one use is spent: a person decides

    page.goto(f"{live_server.url}/approvals/{covered.pk}/")
    expect(page.locator("#decided-by-rule")).to_have_text(f"standing approval #{rule.pk}")
    page.click("#decided-by-rule")
    expect(page.locator(f"#ended-rules #rule-{rule.pk} .rule-uses")).to_have_text("1 of 1")
    shot(page, "standing-rules-used-up")


def test_a_reviewer_revokes_a_rule_on_its_page(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    project = factories.make_project("novelforge")
    ann = factories.make_user("ann", role="reviewer", projects=[project])
    rule = standing_approval_create(project=project, actor=Actor.for_user(ann), tool="publish_chapter",
                                    max_uses=5, expires_in=dt.timedelta(hours=4), reason="launch week")
    factories.make_user("bea", role="reviewer", projects=[project])
    login(page, "bea")

    page.goto(f"{live_server.url}/approvals/standing/")
    expect(page.locator(f"#live-rules #rule-{rule.pk} .rule-uses")).to_have_text("0 of 5")
    page.click(f"#revoke-{rule.pk}")
    expect(page.locator(f"#ended-rules #rule-{rule.pk} .rule-revoked")).to_be_visible()
    shot(page, "standing-rule-revoked")

    assert StandingApproval.objects.get(pk=rule.pk).revoked_by.username == "bea"
    assert _ask_again(project).status == ApprovalStatus.PENDING

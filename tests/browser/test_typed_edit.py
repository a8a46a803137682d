"""Edit-and-approve typed from the tool's declared schema (issue 32), in Chromium: a wrong type, a value the schema
refuses, a missing reason and an unknown argument in the raw JSON are each refused with the field's error and no
decision; a correct typed edit with a reason is approved."""

import pytest
from playwright.sync_api import Page, expect

from demo.scenario import demo_scenario_create
from demo.tools import PUBLISH_CHAPTER_SCHEMA
from harness.actors import Actor
from runs_app.models import ApprovalRequest, ApprovalStatus
from runs_app.services import tool_schema_register
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_typed_edit_is_refused_field_by_field_then_approved(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    project = factories.make_project("novelforge")
    tool_schema_register(project=project, tool="publish_chapter", schema=PUBLISH_CHAPTER_SCHEMA,
                         actor=Actor.for_agent("demo"))
    run = demo_scenario_create(project=project)
    approval = ApprovalRequest.objects.get(run=run, status=ApprovalStatus.PENDING)
    factories.make_user("rita", role="reviewer", projects=[project])

    def still_pending() -> None:
        assert ApprovalRequest.objects.get(pk=approval.pk).status == ApprovalStatus.PENDING

    login(page, "rita")
    page.goto(f"{live_server.url}/approvals/{approval.pk}/")
    expect(page.locator("#argument-schema")).to_contain_text("version 1")
    page.click("text=Edit the arguments and approve")
    # Typed fields: the request's values, a select for the enum and the boolean, the required ones marked.
    expect(page.locator("#typed_arg__chapter")).to_have_value("3")
    expect(page.locator("#typed_arg__title")).to_have_value("The Lighthouse")
    expect(page.locator("select#typed_arg__channel option")).to_have_count(4)  # "—" and the three values
    expect(page.locator("select#typed_arg__notify_readers")).to_be_visible()
    expect(page.locator("label[for=typed_arg__chapter]")).to_contain_text("(required)")
    expect(page.locator("label[for=typed_arg__channel]")).not_to_contain_text("(required)")
    shot(page, "approval-typed-edit")

    # A wrong type: the field's own error, no decision.
    page.fill("#typed_arg__chapter", "three")
    page.fill("#typed_reason", "chapter three")
    page.click("#typed-edit-approve")
    expect(page.locator("#typed_arg__chapter_error")).to_contain_text("whole number")
    still_pending()

    # A value of the right type the schema refuses (minimum 1): the decision's refusal, on that field.
    page.fill("#typed_arg__chapter", "0")
    page.click("#typed-edit-approve")
    expect(page.locator("#typed_arg__chapter_error")).to_contain_text("less than the minimum")
    still_pending()

    # No reason: refused.
    page.fill("#typed_arg__chapter", "4")
    page.fill("#typed_reason", "")
    page.click("#typed-edit-approve")
    expect(page.locator("#typed_reason_error")).to_contain_text("reason")
    still_pending()

    # The raw JSON fallback is validated too: "colour" is no argument of publish_chapter.
    page.click("text=Or edit the raw JSON")
    page.fill("#edit_arguments", '{"chapter": 4, "title": "The Lighthouse", "colour": "red"}')
    page.fill("#edit_reason", "red is nicer")
    page.click("#edit-approve")
    expect(page.locator("#edit_arguments_error")).to_contain_text("colour")
    still_pending()

    # A correct typed edit with a reason: approved, as edited.
    page.fill("#typed_arg__chapter", "4")
    page.select_option("#typed_arg__channel", label="newsletter")
    page.fill("#typed_reason", "Chapter 4 is the next one; the newsletter readers asked")
    page.click("#typed-edit-approve")
    expect(page.locator("#decision-summary")).to_contain_text("approved")
    expect(page.locator("#approved-arguments")).to_contain_text("newsletter")
    shot(page, "approval-typed-edit-approved")
    decided = ApprovalRequest.objects.get(pk=approval.pk)
    assert decided.status == ApprovalStatus.APPROVED
    assert decided.approved_arguments == {"chapter": 4, "title": "The Lighthouse", "channel": "newsletter"}
    assert decided.decision_reason == "Chapter 4 is the next one; the newsletter readers asked"

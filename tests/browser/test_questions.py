"""A question answered in Chromium (issue 33, part 4): the agent asks through the client, a reviewer finds it in the
inbox's Questions tab, answers it on its page, and the agent reads the answer through the client; a second answer
(another reviewer's page opened before the first answer) is refused 409 and changes nothing."""

import pytest
from harness_client import HarnessClient
from playwright.sync_api import Page, expect

from runs_app.models import HumanQuestion
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_question_answered_in_the_console_is_read_by_the_agent(  # type: ignore[no-untyped-def]
        page: Page, live_server, login, shot) -> None:
    project = factories.make_project("novelforge")
    _, token = factories.make_agent_token(project, name="writer-1")
    for name in ("ann", "bob"):
        factories.make_user(name, role="reviewer", projects=[project])
    with HarnessClient(live_server.url, token) as agent:
        asked = agent.ask_question("Which title for chapter 3?", idempotency_key="title-3",
                                   answer_schema={"type": "string", "enum": ["The Lighthouse", "The Keeper"]},
                                   context={"chapter": 3})

        login(page, "ann")
        page.goto(f"{live_server.url}/approvals/")
        page.click("#tab-questions")
        expect(page.locator("#questions-count")).to_have_text("1")
        page.click(f"tr[data-question='{asked.id}'] a >> nth=0")
        expect(page.locator("#question-text")).to_have_text("Which title for chapter 3?")
        second = page.context.browser.new_context().new_page()  # bob opens it too, before ann answers
        login(second, "bob")
        second.goto(f"{live_server.url}/questions/{asked.id}/")
        page.check("input[name=answer][value='The Keeper']")
        shot(page, "question-answer")
        page.click("#answer-button")
        expect(page.locator("#answered-by")).to_have_text("ann")
        expect(page.locator("#question-status")).to_have_text("answered")

        read = agent.wait_for_question(asked.id, timeout=10, poll_interval=0.1)
        assert (read.answer, read.answered_by, read.answer_fingerprint) == ("The Keeper", "ann", asked.fingerprint)

        second.check("input[name=answer][value='The Lighthouse']")
        with second.expect_response(f"**/questions/{asked.id}/answer/") as answer:
            second.click("#answer-button")
        assert answer.value.status == 409
        expect(second.locator("#conflict")).to_contain_text("Already answered by ann")
        shot(second, "question-second-answer")
    assert HumanQuestion.objects.get(pk=asked.id).answer == "The Keeper"

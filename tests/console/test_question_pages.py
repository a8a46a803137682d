"""Questions in the console (issue 33, part 4): the inbox's question tab, a question's page with the form its schema
asks for, an answer given once (a second is 409 and changes nothing), and the roles and CSRF every form has."""

import pytest
from django.test import Client
from django.urls import reverse

from harness.actors import Actor
from runs_app.models import HumanQuestion, QuestionStatus
from runs_app.services.questions import question_ask
from tests import factories
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db


def _post(client: Client, question: HumanQuestion, **data: object) -> object:
    return client.post(reverse("runs:question_answer", args=[question.pk]),
                       {"version": question.version, "fingerprint": question.fingerprint, **data})


def test_a_reviewer_answers_a_choice_once(scene: Scene, reviewer_client, client_for, project) -> None:  # type: ignore[no-untyped-def]
    inbox = reviewer_client.get(reverse("runs:approval_inbox") + "?kind=question").content.decode()
    assert f'data-question="{scene.question.pk}"' in inbox and 'id="questions-count"' in inbox
    page = reviewer_client.get(reverse("runs:question_detail", args=[scene.question.pk])).content.decode()
    assert 'type="radio" name="answer" value="release"' in page and "Which branch" in page

    answered = _post(reviewer_client, scene.question, answer="release")

    assert answered.status_code == 302
    question = HumanQuestion.objects.get(pk=scene.question.pk)
    assert (question.status, question.answer, question.answered_by.username) == ("answered", "release", "rita")
    second = _post(client_for(factories.make_user("sam", role="reviewer", projects=[project])), scene.question,
                   answer="main")
    assert second.status_code == 409 and "Already answered by rita" in second.content.decode()
    assert HumanQuestion.objects.get(pk=scene.question.pk).answer == "release"


def test_a_form_question_gets_a_form(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    asked = question_ask(project=scene.project, actor=Actor.for_agent("coder"), question="Release notes?",
                         idempotency_key="q-form", answer_schema={
                             "type": "object", "required": ["title"],
                             "properties": {"title": {"type": "string"}, "issues": {"type": "integer"},
                                            "breaking": {"type": "boolean"}}})
    page = reviewer_client.get(reverse("runs:question_detail", args=[asked.pk])).content.decode()
    assert 'name="f_title"' in page and 'name="f_issues"' in page and 'name="f_breaking"' in page
    assert _post(reviewer_client, asked, f_issues="3").status_code == 400  # the title is required
    assert _post(reviewer_client, asked, f_title="v2", f_issues="3", f_breaking="on").status_code == 302
    assert HumanQuestion.objects.get(pk=asked.pk).answer == {"title": "v2", "issues": 3, "breaking": True}


def test_an_operator_reads_but_does_not_answer(scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    page = operator_client.get(reverse("runs:question_detail", args=[scene.question.pk])).content.decode()
    assert 'id="answer-button"' not in page and "You do not hold the reviewer role" in page
    assert _post(operator_client, scene.question, answer="main").status_code == 403
    assert HumanQuestion.objects.get(pk=scene.question.pk).status == QuestionStatus.PENDING


def test_another_project_s_question_is_a_404(scene: Scene, other_scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    assert reviewer_client.get(reverse("runs:question_detail", args=[other_scene.question.pk])).status_code == 404
    assert _post(reviewer_client, other_scene.question, answer="main").status_code == 404
    inbox = reviewer_client.get(reverse("runs:approval_inbox") + "?kind=question").content.decode()
    assert f'data-question="{other_scene.question.pk}"' not in inbox


def test_answering_needs_the_csrf_token(scene: Scene, reviewer) -> None:  # type: ignore[no-untyped-def]
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(reviewer)
    assert _post(strict, scene.question, answer="main").status_code == 403
    assert HumanQuestion.objects.get(pk=scene.question.pk).status == QuestionStatus.PENDING

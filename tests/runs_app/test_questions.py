"""Questions to people (issue 33, part 4): asked durably and idempotently, answered once by a person whose answer
matches the schema, bound to the question's fingerprint and audited; a second answer, an expired or cancelled
question, the asker, an agent, a group's outsider and another project are refused with their codes."""

import datetime as dt
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from harness.actors import Actor
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.models import AuditEntry, Project
from runs_app.models import HumanQuestion, QuestionStatus, ReviewerGroup, RunEvent
from runs_app.services.questions import question_answer, question_ask, question_cancel, questions_expire_due
from tests import factories

pytestmark = pytest.mark.django_db
AGENT = Actor.for_agent("writer-1")
CHOICE = {"type": "string", "enum": ["blue", "red"]}
FORM = {"type": "object", "properties": {"title": {"type": "string"}, "chapters": {"type": "integer", "minimum": 1},
                                         "final": {"type": "boolean"}}, "required": ["title"]}


@pytest.fixture
def rita(project: Project) -> User:
    return factories.make_user("rita", role="reviewer", projects=[project])


def _ask(project: Project, **kwargs: Any) -> HumanQuestion:
    kwargs.setdefault("question", "Which cover?")
    kwargs.setdefault("idempotency_key", "q-1")
    kwargs.setdefault("answer_schema", CHOICE)
    return question_ask(project=project, actor=AGENT, **kwargs)


def _answer(question: HumanQuestion, user: User, answer: Any, **kwargs: Any) -> HumanQuestion:
    return question_answer(project=question.project_id, question_id=question.pk, actor=Actor.for_user(user),
                           answer=answer, **kwargs)


def test_a_question_is_answered_once_and_the_answer_is_bound_and_audited(project: Project, rita: User) -> None:
    run = factories.make_run(project)
    asked = _ask(project, run_id=run.pk, context={"covers": ["blue.png", "red.png"]})
    assert (asked.status, asked.asked_by, asked.version) == (QuestionStatus.PENDING, "agent:writer-1", 1)

    answered = _answer(asked, rita, "blue", expected_version=1, expected_fingerprint=asked.fingerprint)

    assert (answered.status, answered.answer, answered.answered_by) == (QuestionStatus.ANSWERED, "blue", rita)
    assert answered.answer_fingerprint == asked.fingerprint and answered.version == 2
    assert AuditEntry.objects.filter(action="question.answered", target_id=str(asked.pk), actor="user:rita").exists()
    assert list(RunEvent.objects.filter(run=run, kind__startswith="question.").values_list("kind", flat=True)) == [
        "question.asked", "question.answered"]
    sam = factories.make_user("sam", role="reviewer", projects=[project])
    with pytest.raises(ConflictError) as twice:
        _answer(asked, sam, "red")
    assert (twice.value.code, twice.value.extra["answered_by"]) == ("already_answered", "rita")
    assert HumanQuestion.objects.get(pk=asked.pk).answer == "blue"


def test_asking_again_under_the_key_is_the_same_question(project: Project) -> None:
    first = _ask(project)
    assert _ask(project).pk == first.pk
    with pytest.raises(ConflictError) as other:
        _ask(project, question="Which title?")
    assert other.value.code == "idempotency_key_reused"
    assert HumanQuestion.objects.count() == 1


@pytest.mark.parametrize(("schema", "answer", "field"), [
    (CHOICE, "green", "answer"),
    ({"type": "string", "maxLength": 5}, "far too long", "answer"),
    (FORM, {"chapters": 3}, "title"),
    (FORM, {"title": "T", "chapters": 0}, "chapters"),
])
def test_an_answer_must_match_the_schema(project: Project, rita: User, schema: dict, answer: Any,
                                         field: str) -> None:
    asked = _ask(project, answer_schema=schema)
    with pytest.raises(ValidationFailed) as refused:
        _answer(asked, rita, answer)
    assert (refused.value.code, refused.value.extra["field"]) == ("answer_invalid", field)
    assert HumanQuestion.objects.get(pk=asked.pk).status == QuestionStatus.PENDING


def test_a_form_answer(project: Project, rita: User) -> None:
    answered = _answer(_ask(project, answer_schema=FORM), rita, {"title": "The Keeper", "chapters": 12})
    assert answered.answer == {"title": "The Keeper", "chapters": 12}


@pytest.mark.parametrize("schema", [{"type": "array"}, {"type": "string", "enum": [1, 2]},
                                    {"type": "object", "properties": {"x": {"type": "array"}}},
                                    {"type": "nonsense"}])
def test_only_schemas_the_console_can_show(project: Project, schema: dict) -> None:
    with pytest.raises(ValidationFailed) as refused:
        _ask(project, answer_schema=schema)
    assert refused.value.code == "answer_schema_invalid"


def test_who_may_not_answer(project: Project, rita: User, other_project: Project) -> None:
    asked = _ask(project)
    with pytest.raises(Forbidden) as agent:
        question_answer(project=project.pk, question_id=asked.pk, actor=AGENT, answer="blue")
    assert agent.value.code == "not_a_reviewer"
    stranger = factories.make_user("stan", role="reviewer", projects=[other_project])
    with pytest.raises(NotFoundError):
        _answer(asked, stranger, "blue")
    own = question_ask(project=project, actor=Actor.for_user(rita), question="Mine?", idempotency_key="q-own")
    with pytest.raises(Forbidden) as self_answer:
        _answer(own, rita, "yes")
    assert self_answer.value.code == "self_answer"
    editors = ReviewerGroup.objects.create(project=project, name="editors")
    routed = _ask(project, idempotency_key="q-routed", group=editors.pk)
    with pytest.raises(Forbidden) as outsider:
        _answer(routed, rita, "blue")
    assert outsider.value.code == "not_eligible"
    editors.members.add(rita)
    assert _answer(routed, rita, "blue").status == QuestionStatus.ANSWERED


def test_expired_and_cancelled_questions_take_no_answer(project: Project, rita: User) -> None:
    soon = _ask(project, expires_at=timezone.now() + dt.timedelta(minutes=5))
    assert questions_expire_due(now=timezone.now() + dt.timedelta(minutes=6)) == [soon.pk]
    with pytest.raises(ConflictError) as expired:
        _answer(soon, rita, "blue")
    assert expired.value.code == "question_expired"
    withdrawn = _ask(project, idempotency_key="q-2")
    assert question_cancel(question_id=withdrawn.pk, actor=AGENT,
                           project_ids=[project.pk]).status == QuestionStatus.CANCELLED
    with pytest.raises(ConflictError) as cancelled:
        _answer(withdrawn, rita, "blue")
    assert cancelled.value.code == "question_cancelled"
    with pytest.raises(ConflictError) as again:
        question_cancel(question_id=withdrawn.pk, actor=AGENT, project_ids=[project.pk])
    assert again.value.code == "question_not_pending"


def test_a_stale_version_is_refused(project: Project, rita: User) -> None:
    asked = _ask(project)
    with pytest.raises(ConflictError) as stale:
        _answer(asked, rita, "blue", expected_version=7)
    assert stale.value.code == "version_conflict"

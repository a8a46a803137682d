"""Questions an agent asks a person (issue 33, part 4): beside approvals, not instead of them.

An approval is a yes or no on one action; a question wants an answer: free text, a choice, or a small form, each
described by a JSON Schema (`answer_schema`). A question is durable (the agent may ask, stop, and read the answer
days later), routed (to a reviewer group, or any reviewer of the project), may expire, and is answered once: the
answer is one conditional UPDATE from pending, so of two people answering at once one stands and the other is told
who answered (409 `already_answered`). The answer is validated against the schema, bound to the question's
fingerprint (the question, its schema and its context, as asked) and audited. Asking moves no run: a run that
needs the answer before it goes on waits for it itself (the client's `wait_for_question`, the adapters).
"""

import datetime as dt
from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.canonical import digest
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.imports import imported_ids
from harness.models import Project
from harness.tenancy import Role, acting_filter, decision_refusal, decision_scope, require_project_operator
from runs_app.models import HumanQuestion, QuestionStatus, ReviewerGroup, Run
from runs_app.services.runs import run_event_append
from runs_app.signals import question_asked
from runs_app.tool_schemas import argument_errors

FREE_TEXT: dict[str, Any] = {"type": "string", "maxLength": 5000}
_FORM_TYPES = {"string", "number", "integer", "boolean"}
MAX_WAIT = dt.timedelta(days=30)


def answer_schema_problem(schema: Any) -> str:
    """Why `schema` is not an answer schema this service can show a person ("" when it is): free text
    (`{"type": "string"}`), a choice (`{"type": "string", "enum": [...]}`), or a small form (`{"type": "object",
    "properties": {...}}` of text, number, integer, yes/no and choice fields, at most 20)."""
    from jsonschema import exceptions, validators

    if not isinstance(schema, dict):
        return "answer_schema is a JSON Schema object."
    try:
        validators.validator_for(schema, default=validators.Draft202012Validator).check_schema(schema)
    except exceptions.SchemaError as exc:
        return f"Not a valid JSON Schema: {exc.message}"
    kind = schema.get("type")
    if kind == "string":
        choices = schema.get("enum")
        if choices is not None and (not isinstance(choices, list) or not choices
                                    or not all(isinstance(c, str) for c in choices)):
            return "A choice lists its options as strings in enum."
        return ""
    if kind == "object":
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties or len(properties) > 20:
            return "A form lists 1 to 20 fields in properties."
        for name, field in properties.items():
            if not isinstance(field, dict) or field.get("type") not in _FORM_TYPES:
                return f"The field {name!r} is text, a number, an integer or yes/no (a type of {sorted(_FORM_TYPES)})."
        return ""
    return 'An answer is free text or a choice ("type": "string") or a small form ("type": "object").'


def question_ask(
    *, project: Project | int, actor: Actor, question: str, idempotency_key: str,
    answer_schema: dict[str, Any] | None = None, context: dict[str, Any] | None = None, run_id: int | None = None,
    expires_at: dt.datetime | None = None, group: int | None = None,
) -> HumanQuestion:
    """Ask a person, durably (audited `question.asked`, and on the run's events when it names one); the reviewers
    are told after commit (the `question_asked` signal: the routed group's members, else the project's reviewers).

    The same `idempotency_key` with the same question (its fingerprint) is the question asked already, returned as
    it is now (answered, maybe); with another one, 409 `idempotency_key_reused`. 400 `answer_schema_invalid` for a
    schema the console cannot show (answer_schema_problem), 400 `invalid` for an empty question or a deadline not
    in the next 30 days; a run or group not the project's, 404."""
    project_id = project if isinstance(project, int) else project.pk
    question = (question or "").strip()
    if not question or len(question) > 5000:
        raise ValidationFailed("A question is 1 to 5000 characters.", code="invalid", field="question")
    if not idempotency_key:
        raise ValidationFailed("A question needs an idempotency key.", code="invalid", field="idempotency_key")
    schema = answer_schema if answer_schema else dict(FREE_TEXT)
    problem = answer_schema_problem(schema)
    if problem:
        raise ValidationFailed(problem, code="answer_schema_invalid", field="answer_schema")
    if context is not None and not isinstance(context, dict):
        raise ValidationFailed("context is an object.", code="invalid", field="context")
    now = timezone.now()
    if expires_at is not None and not now < expires_at <= now + MAX_WAIT:
        raise ValidationFailed("A question's deadline is within the next 30 days.", code="invalid",
                               field="expires_at")
    if run_id is not None and not Run.objects.filter(project_id=project_id, pk=run_id).exists():
        raise NotFoundError(f"Run {run_id} does not exist.")
    if group is not None and not ReviewerGroup.objects.filter(project_id=project_id, pk=group).exists():
        raise NotFoundError(f"Reviewer group {group} does not exist.")
    fingerprint = digest({"question": question, "answer_schema": schema, "context": context or {}})
    try:
        with transaction.atomic():
            asked = HumanQuestion.objects.create(
                project_id=project_id, run_id=run_id, question=question, answer_schema=schema, context=context or {},
                fingerprint=fingerprint, idempotency_key=idempotency_key, asked_by=actor.label,
                asked_by_token=actor.token, expires_at=expires_at, routed_group_id=group)
            audit_record(project=project_id, actor=actor, action="question.asked", target=asked,
                         data={"fingerprint": fingerprint, "run": run_id, "group": group})
            if run_id is not None:
                run_event_append(project=project_id, run_id=run_id, kind="question.asked",
                                 data={"question": asked.pk, "fingerprint": fingerprint})
    except IntegrityError:
        existing = HumanQuestion.objects.filter(project_id=project_id, idempotency_key=idempotency_key).first()
        if existing is None:
            raise
        if existing.fingerprint != fingerprint:
            raise ConflictError("This idempotency key already names a different question.",
                                code="idempotency_key_reused", question=existing.pk) from None
        return existing
    facts = {"project_id": project_id, "question_id": asked.pk, "run_id": run_id, "question": question,
             "asked_by": actor.label, "group_id": group}
    transaction.on_commit(lambda: question_asked.send(sender=HumanQuestion, **facts))
    return asked


def question_answer(
    *, question_id: int, actor: Actor, answer: Any, project: Project | int | None = None,
    project_ids: Sequence[int] | None = None, expected_version: int | None = None,
    expected_fingerprint: str | None = None,
) -> HumanQuestion:
    """Answer a pending question, once: a person holding the reviewer role in its project (an agent or the worker,
    403 `not_a_reviewer`), a member of the group it is routed to if it is routed (403 `not_eligible`), never the one
    who asked (403 `self_answer`). The answer must match the question's schema (400 `answer_invalid` naming the
    field). One conditional UPDATE from pending, not past its deadline, given the expected version and fingerprint:
    a second answer is 409 `already_answered` naming who answered; an expired one 409 `question_expired`; a
    cancelled one 409 `question_cancelled`; another version 409 `version_conflict`. Audited `question.answered`."""
    user, visible = decision_scope(
        HumanQuestion.objects.all(), actor_user=actor.user, role=Role.REVIEWER, project=project,
        project_ids=project_ids, missing=f"Question {question_id} does not exist.",
        refused="Only reviewers answer questions.", code="not_a_reviewer")
    current = visible.filter(pk=question_id).first()
    if current is None:
        raise NotFoundError(f"Question {question_id} does not exist.")
    if current.asked_by == actor.label:
        raise Forbidden("Nobody answers their own question.", code="self_answer")
    if current.routed_group_id is not None and not ReviewerGroup.objects.filter(
            pk=current.routed_group_id, members=user.pk).exists():
        raise Forbidden("The question is routed to a group you are not in.", code="not_eligible")
    errors = argument_errors(current.answer_schema, answer)
    if errors:
        first = errors[0]
        raise ValidationFailed(f"{first.field or 'The answer'}: {first.message}", code="answer_invalid",
                               field=first.field or "answer")
    now = timezone.now()
    guards = Q(status=QuestionStatus.PENDING) & (Q(expires_at__isnull=True) | Q(expires_at__gt=now))
    if expected_version is not None:
        guards &= Q(version=expected_version)
    if expected_fingerprint is not None:
        guards &= Q(fingerprint=expected_fingerprint)
    with transaction.atomic():
        moved = visible.filter(guards, acting_filter(user, Role.REVIEWER), pk=question_id).update(
            status=QuestionStatus.ANSWERED, answer=answer, answer_fingerprint=F("fingerprint"), answered_by=user,
            answered_at=now, version=F("version") + 1, updated_at=now)
        if not moved:
            raise _refusal(question_id, user, now, expected_version, expected_fingerprint)
        answered = HumanQuestion.objects.select_related("answered_by").get(pk=question_id)
        audit_record(project=answered.project_id, actor=actor, action="question.answered", target=answered,
                     data={"fingerprint": answered.answer_fingerprint, "answer_digest": digest(answer)})
        if answered.run_id is not None:
            run_event_append(project=answered.project_id, run_id=answered.run_id, kind="question.answered",
                             data={"question": answered.pk, "by": user.get_username(),
                                   "fingerprint": answered.answer_fingerprint})
    return answered


def _refusal(question_id: int, user: Any, now: dt.datetime, expected_version: int | None,
             expected_fingerprint: str | None) -> Exception:
    """Why an answer's write matched nothing, read after it."""
    current = HumanQuestion.objects.select_related("answered_by").get(pk=question_id)
    if current.status == QuestionStatus.ANSWERED:
        by = current.answered_by.get_username() if current.answered_by else "someone"
        return ConflictError(f"Already answered by {by}.", code="already_answered", answered_by=by,
                             answered_at=current.answered_at.isoformat() if current.answered_at else None,
                             current_version=current.version)
    if current.status == QuestionStatus.CANCELLED:
        return ConflictError("The question was cancelled.", code="question_cancelled", current_version=current.version)
    if current.status == QuestionStatus.EXPIRED or (current.expires_at is not None and current.expires_at <= now):
        return ConflictError("The question has expired.", code="question_expired", current_version=current.version)
    scope = decision_refusal(user, Role.REVIEWER, current.project_id, refused="Only reviewers answer questions.",
                             code="not_a_reviewer")
    if scope is not None:
        return scope
    if expected_fingerprint is not None and current.fingerprint != expected_fingerprint:
        return ConflictError("The question is not the one shown.", code="fingerprint_changed")
    return ConflictError(f"The question is at version {current.version}, not {expected_version}.",
                         code="version_conflict", current_version=current.version)


def question_cancel(*, question_id: int, actor: Actor, project_ids: Sequence[int]) -> HumanQuestion:
    """Withdraw a pending question: the agent that asked it (its label), or an operator of the project. Not pending:
    409 `question_not_pending`. Audited `question.cancelled`."""
    current = HumanQuestion.objects.filter(project_id__in=project_ids, pk=question_id).first()
    if current is None:
        raise NotFoundError(f"Question {question_id} does not exist.")
    if current.asked_by != actor.label:
        require_project_operator(actor.user, current.project_id, doing="withdraw another's question")
    now = timezone.now()
    with transaction.atomic():
        if not HumanQuestion.objects.filter(pk=question_id, status=QuestionStatus.PENDING).update(
                status=QuestionStatus.CANCELLED, version=F("version") + 1, updated_at=now):
            current.refresh_from_db()
            raise ConflictError(f"The question is {current.status}.", code="question_not_pending",
                                current_status=current.status)
        audit_record(project=current.project_id, actor=actor, action="question.cancelled", target=current, data={})
        if current.run_id is not None:
            run_event_append(project=current.project_id, run_id=current.run_id, kind="question.cancelled",
                             data={"question": current.pk})
    current.refresh_from_db()
    return current


def questions_expire_due(*, now: dt.datetime | None = None) -> list[int]:
    """The recovery pass's: every pending question past its deadline becomes expired (one UPDATE each, so an answer
    landing at the same moment either stands or is refused `question_expired`, never both), on its run's events."""
    now = now or timezone.now()
    expired: list[int] = []
    for question_id, project_id, run_id in HumanQuestion.objects.filter(
            status=QuestionStatus.PENDING, expires_at__lte=now).exclude(run_id__in=imported_ids("run")).values_list(
            "pk", "project_id", "run_id"):
        with transaction.atomic():
            if HumanQuestion.objects.filter(pk=question_id, status=QuestionStatus.PENDING).update(
                    status=QuestionStatus.EXPIRED, version=F("version") + 1, updated_at=now):
                if run_id is not None:
                    run_event_append(project=project_id, run_id=run_id, kind="question.expired",
                                     data={"question": question_id})
                expired.append(question_id)
    return expired

"""A question's page (issue 33, part 4): what the agent asks, its context, and the answer form generated from the
question's schema; a reviewer answers it once (runs_app.services.questions, the service the API calls), and the
page then shows who answered what. The pending questions are listed in the approvals inbox (`?kind=question`)."""

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from harness.actors import Actor
from harness.http.errors import ConflictError, DomainError, Forbidden, ValidationFailed
from harness.http.views import ConsoleRequest, console_page, project_ids, project_roles, render_page, role_required
from harness.tenancy import Role
from runs_app.models import HumanQuestion, QuestionStatus
from runs_app.presentation.json_text import pretty
from runs_app.question_forms import AnswerForm
from runs_app.selectors.questions import question_get
from runs_app.services.questions import question_answer


def _question(request: ConsoleRequest, question_id: int) -> HumanQuestion:
    found = question_get(project_ids=project_ids(request), question_id=question_id)
    if found is None:
        raise Http404("No such question.")
    return found


def _page(request: ConsoleRequest, question: HumanQuestion, form: AnswerForm | None = None, *, status: int = 200,
          **extra: Any) -> HttpResponse:
    form = form or AnswerForm(schema=question.answer_schema,
                              initial={"version": question.version, "fingerprint": question.fingerprint})
    context = {"question": question, "form": form, "roles": project_roles(request, question.project_id),
               "context_pretty": pretty(question.context) if question.context else "",
               "answer_pretty": pretty(question.answer) if question.status == QuestionStatus.ANSWERED else "",
               **extra}
    return render_page(request, "runs/question_detail.html", context, status=status)


@require_GET
@console_page
def question_detail(request: ConsoleRequest, question_id: int) -> HttpResponse:
    return _page(request, _question(request, question_id))


@require_POST
@console_page
@role_required(Role.REVIEWER)
def question_answer_view(request: ConsoleRequest, question_id: int) -> HttpResponse:
    question = _question(request, question_id)
    form = AnswerForm(request.POST, schema=question.answer_schema)
    if not form.is_valid():
        return _page(request, question, form, status=400)
    try:
        question_answer(project=question.project_id, question_id=question.pk, actor=Actor.of(request.user),
                        answer=form.answer(), expected_version=form.cleaned_data["version"],
                        expected_fingerprint=form.cleaned_data["fingerprint"])
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    except ConflictError as exc:
        return _page(request, _question(request, question_id), status=409, conflict=exc.detail)
    except ValidationFailed as exc:
        form.add_error(None, exc.detail)
        return _page(request, question, form, status=400)
    except DomainError as exc:
        return _page(request, question, form, status=exc.http_status, conflict=exc.detail)
    messages.success(request, f"Answered question #{question.pk}; the agent reads it now.")
    return redirect(reverse("runs:question_detail", args=[question.pk]))

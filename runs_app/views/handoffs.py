"""The console's handoff page: the packet, its status, the result, the independence checks and the origin run;
a reviewer answers a handoff to a human_reviewer session there (runs_app.services.handoff_answer_by_person)."""

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from harness.actors import Actor
from harness.http.errors import ConflictError, DomainError, Forbidden
from harness.http.views import ConsoleRequest, console_page, project_ids, project_roles, render_page, role_required
from harness.tenancy import Role
from runs_app.forms import HandoffAnswerForm
from runs_app.models import Handoff, HandoffStatus
from runs_app.presentation.json_text import pretty
from runs_app.selectors import handoffs as handoffs_sel
from runs_app.services import handoff_answer_by_person
from sessions_app.models import SessionRole


@require_GET
@console_page
def handoff_detail(request: ConsoleRequest, handoff_id: int) -> HttpResponse:
    handoff = handoffs_sel.handoff_get(project_ids=project_ids(request), handoff_id=handoff_id)
    return _page(request, handoff, HandoffAnswerForm(initial={"version": handoff.version}))


@require_POST
@console_page
@role_required(Role.REVIEWER)
def handoff_answer(request: ConsoleRequest, handoff_id: int) -> HttpResponse:
    """A reviewer's answer to a human_reviewer's handoff: validated here, decided by the service; a refusal
    re-renders the page with its reason (400 for the input, 409 for the handoff's state)."""
    handoff = handoffs_sel.handoff_get(project_ids=project_ids(request), handoff_id=handoff_id)
    form = HandoffAnswerForm(request.POST)
    if not form.is_valid():
        return _page(request, handoff, form, status=400)
    try:
        handoff_answer_by_person(project=handoff.project, handoff_id=handoff.pk, actor=Actor.of(request.user),
                                 result=form.cleaned_data["result"], expected_version=form.cleaned_data["version"])
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    except ConflictError as exc:
        return _page(request, handoffs_sel.handoff_get(project_ids=project_ids(request), handoff_id=handoff_id), form,
                     status=409, error=exc.detail)
    except DomainError as exc:
        return _page(request, handoff, form, status=400, error=exc.detail)
    return redirect("runs:handoff_detail", handoff_id=handoff.pk)


def _page(request: ConsoleRequest, handoff: Handoff, form: HandoffAnswerForm, *, status: int = 200,
          error: str = "") -> HttpResponse:
    packet = handoff.packet or {}
    answerable = (handoff.receiver_session.role == SessionRole.HUMAN_REVIEWER
                  and handoff.status in (HandoffStatus.ISSUED, HandoffStatus.ACCEPTED)
                  and project_roles(request, handoff.project_id)[Role.REVIEWER])
    context: dict[str, Any] = {
        "handoff": handoff,
        "objective": packet.get("objective", ""),
        "inputs": packet.get("inputs", []),
        "capabilities": packet.get("allowed_capabilities", []),
        "schema_pretty": pretty(packet.get("output_schema")),
        "origin_cursor_pretty": pretty((packet.get("origin") or {}).get("cursor")),
        "result_pretty": pretty(handoff.result) if handoff.result_hash else "",
        "checks": (handoff.independence or {}).get("checks", []),
        "answer_form": form if answerable else None,
        "error": error,
    }
    return render_page(request, "runs/handoff_detail.html", context, status=status)

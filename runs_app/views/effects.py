"""An external effect's page, and a person's decision on an effect whose outcome is unknown: mark it delivered,
retry it or abandon it.
"""

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from harness.actors import Actor
from harness.http.errors import ConflictError, DomainError, Forbidden
from harness.http.views import ConsoleRequest, console_page, project_ids, project_roles, render_page, role_required
from harness.tenancy import Role
from runs_app.forms import AbandonEffectForm, MarkDeliveredForm, RetryEffectForm
from runs_app.models import EffectDecision, ExternalEffect
from runs_app.presentation.json_text import pretty
from runs_app.selectors import effects as effects_sel
from runs_app.services import effect_resolve

# --- effects whose outcome is unknown ------------------------------------------------------


EffectForm = MarkDeliveredForm | RetryEffectForm | AbandonEffectForm


_EFFECT_FORMS: dict[str, tuple[str, type[EffectForm]]] = {
    EffectDecision.MARK_DELIVERED: ("delivered_form", MarkDeliveredForm),
    EffectDecision.RETRY: ("retry_form", RetryEffectForm),
    EffectDecision.ABANDON: ("abandon_form", AbandonEffectForm),
}


def _effect_page(request: ConsoleRequest, effect: ExternalEffect, *, status: int = 200, **extra: Any) -> HttpResponse:
    context: dict[str, Any] = {
        "effect": effect,
        "roles": project_roles(request, effect.project_id),
        "result_pretty": pretty(effect.result) if effect.result is not None else "",
        "answer_pretty": pretty(effect.answer) if effect.answer is not None else "",
        "resolution_pretty": pretty(effect.resolution) if effect.resolution is not None else "",
        "run": effect.run,
    }
    for key, form_class in _EFFECT_FORMS.values():
        context[key] = extra.pop(key, None) or form_class(initial={"version": effect.version})
    context.update(extra)
    return render_page(request, "runs/effect_detail.html", context, status=status)


@require_GET
@console_page
def effect_detail(request: ConsoleRequest, effect_id: int) -> HttpResponse:
    return _effect_page(request, effects_sel.effect_detail(project_ids=project_ids(request), effect_id=effect_id))


def _resolve(request: ConsoleRequest, effect_id: int, decision: str) -> HttpResponse:
    """Validate the decision's form, call effect_resolve, and come back to the effect's page.

    The effect must be visible (else 404); an invalid form or a refused decision re-renders the page with
    it (400, 409); success redirects to the page, which shows the decision and the run's resume.
    """
    effect = effects_sel.effect_detail(project_ids=project_ids(request), effect_id=effect_id)
    key, form_class = _EFFECT_FORMS[decision]
    form = form_class(request.POST)
    if not form.is_valid():
        return _effect_page(request, effect, status=400, **{key: form})
    data = form.cleaned_data
    try:
        effect_resolve(project=effect.project_id, effect_id=effect.pk, actor=Actor.of(request.user),
                       decision=decision, reason=data.get("reason", ""), evidence=data.get("evidence", ""),
                       result=data.get("result"), expected_version=data.get("version"))
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    except ConflictError as exc:
        return _effect_page(request, effects_sel.effect_detail(project_ids=project_ids(request), effect_id=effect_id),
                            status=409, conflict=f"{exc.detail} Reload the page to see the effect as it is now.")
    except DomainError as exc:
        return _effect_page(request, effect, status=400, error=exc.detail, **{key: form})
    return redirect(reverse("runs:effect_detail", args=[effect_id]))


@require_POST
@console_page
@role_required(Role.REVIEWER)
def effect_mark_delivered(request: ConsoleRequest, effect_id: int) -> HttpResponse:
    return _resolve(request, effect_id, EffectDecision.MARK_DELIVERED)


@require_POST
@console_page
@role_required(Role.REVIEWER)
def effect_retry(request: ConsoleRequest, effect_id: int) -> HttpResponse:
    return _resolve(request, effect_id, EffectDecision.RETRY)


@require_POST
@console_page
@role_required(Role.REVIEWER)
def effect_abandon(request: ConsoleRequest, effect_id: int) -> HttpResponse:
    return _resolve(request, effect_id, EffectDecision.ABANDON)

"""The projects page: each project the user can see, the roles they hold in it, its retention (on or off, and the
LangGraph threads' default time to live) and whether it is frozen; an admin freezes and unfreezes a project here
(harness.projects, the same services as the admin's)."""

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from harness.actors import Actor
from harness.http.errors import DomainError, Forbidden
from harness.http.views import console_page, render_page, visible_projects
from harness.models import Project
from harness.projects import project_freeze, project_unfreeze
from harness.tenancy import Role, projects_for_user, user_has_role


class FreezeForm(forms.Form):
    reason = forms.CharField(max_length=2000, widget=forms.TextInput(attrs={"placeholder": "why (required)"}))


class UnfreezeForm(forms.Form):
    reason = forms.CharField(max_length=2000, required=False,
                             widget=forms.TextInput(attrs={"placeholder": "why (optional)"}))


@require_GET
@console_page
def project_list(request: HttpRequest) -> HttpResponse:
    user = request.user
    rows = [{"project": p, "roles": [r for r in (Role.REVIEWER, Role.OPERATOR) if user_has_role(user, r, p.pk)]}
            for p in projects_for_user(user).select_related("frozen_by", "retention_policy").order_by("slug")]
    return render_page(request, "console/projects.html", {
        "rows": rows, "is_admin": user_has_role(user, Role.ADMIN),
        "freeze_form": FreezeForm(), "unfreeze_form": UnfreezeForm(),
    })


def _project(request: HttpRequest, slug: str) -> Project:
    found = next((p for p in visible_projects(request) if p.slug == slug), None)
    if found is None:
        raise Http404("No such project.")
    return found


def _act(request: HttpRequest, call: Callable[[], object], *, done: str) -> HttpResponse:
    """Run a freeze or an unfreeze: a refused role is a 403 page, any other refusal a message; back to the list."""
    try:
        call()
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    except DomainError as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(request, done)
    return redirect("project_list")


@require_POST
@console_page
def project_freeze_view(request: HttpRequest, slug: str) -> HttpResponse:
    project = _project(request, slug)
    form = FreezeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Freezing a project needs a reason.")
        return redirect("project_list")
    return _act(request, lambda: project_freeze(project=project, actor=Actor.of(request.user),
                                                reason=form.cleaned_data["reason"]),
                done=f"Project {project.slug} is frozen.")


@require_POST
@console_page
def project_unfreeze_view(request: HttpRequest, slug: str) -> HttpResponse:
    project = _project(request, slug)
    form = UnfreezeForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    return _act(request, lambda: project_unfreeze(project=project, actor=Actor.of(request.user), reason=reason),
                done=f"Project {project.slug} is unfrozen; retry its blocked runs.")

"""The console's door to erasing a person (admins only): a preview of what goes and what stays, then the
erasure itself, both through memory_app.erasure."""

from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.views.decorators.http import require_http_methods

from harness.actors import Actor
from harness.http.errors import DomainError, Forbidden
from harness.http.views import ConsoleRequest, console_page, render_page, role_required, visible_projects
from harness.tenancy import Role
from memory_app.erasure import person_erase, person_erase_preview
from memory_app.forms import ErasePersonForm


@require_http_methods(["GET", "POST"])
@console_page
@role_required(Role.ADMIN)
def person_erase_page(request: ConsoleRequest) -> HttpResponse:
    """GET: the form, and with a project and subject the preview (counts per store). POST: erase (reason and
    the box required), then show the report."""
    projects = [(p.pk, p.slug) for p in visible_projects(request)]
    posted = request.method == "POST"
    form = ErasePersonForm(request.POST if posted else (request.GET or None), projects=projects)
    context: dict[str, object] = {"form": form, "report": None, "preview": None, "error": ""}
    if not form.is_bound or not form.is_valid():
        return render_page(request, "memory/person_erase.html", context, status=400 if posted else 200)
    actor = Actor.of(request.user)
    data = form.cleaned_data
    try:
        if posted and data["confirm"]:
            context["report"] = person_erase(project=data["project"], actor=actor, subject=data["subject"],
                                             reason=data["reason"])
        else:
            context["preview"] = person_erase_preview(project=data["project"], actor=actor, subject=data["subject"])
            if posted:
                context["error"] = "Tick the box to erase."
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    except DomainError as exc:
        context["error"] = exc.detail
        return render_page(request, "memory/person_erase.html", context, status=exc.http_status)
    return render_page(request, "memory/person_erase.html", context, status=400 if context["error"] else 200)

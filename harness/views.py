"""The console's shell: login, logout, the dashboard, and the helpers every console page uses.

Console pages authenticate with Django's session only; an API bearer token (agent or personal) is
never looked at here, so an agent cannot reach a page however it presents itself.
"""

from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET
from django_htmx.middleware import HtmxDetails

from harness.models import Project
from harness.tenancy import Role, projects_for_user

PAGE = Callable[..., HttpResponse]


class ConsoleRequest(HttpRequest):
    """A console request: django-htmx's middleware adds `htmx` (falsy unless htmx sent it)."""

    htmx: HtmxDetails


def visible_projects(request: HttpRequest) -> QuerySet[Project]:
    """The projects this console user may see, computed once per request."""
    cached = getattr(request, "_console_projects", None)
    if cached is None:
        cached = list(projects_for_user(request.user))
        request._console_projects = cached  # type: ignore[attr-defined]
    return Project.objects.filter(pk__in=[p.pk for p in cached]).order_by("slug")


def project_ids(request: HttpRequest) -> list[int]:
    visible_projects(request)
    return [p.pk for p in request._console_projects]  # type: ignore[attr-defined]


def console_roles(request: HttpRequest) -> dict[str, bool]:
    cached = getattr(request, "_console_roles", None)
    if cached is None:
        user = request.user
        if not user.is_authenticated or not user.is_active:
            cached = dict.fromkeys(Role.ALL, False)
        elif user.is_superuser:
            cached = dict.fromkeys(Role.ALL, True)
        else:
            # One query for all three roles; the same rule as harness.tenancy.user_has_role.
            names = set(user.groups.values_list("name", flat=True))
            cached = {role: role in names or Role.ADMIN in names for role in Role.ALL}
        request._console_roles = cached  # type: ignore[attr-defined]
    return cached


def console_page(view: PAGE) -> PAGE:
    """A console page: a logged-in, active user; `request.projects` holds what they may see."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return view(request, *args, **kwargs)

    return wrapper


def role_required(role: str) -> Callable[[PAGE], PAGE]:
    """Refuse (403) a user without `role`; admins hold every role."""

    def decorate(view: PAGE) -> PAGE:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not console_roles(request)[role]:
                raise PermissionDenied(f"This needs the {role} role.")
            return view(request, *args, **kwargs)

        return wrapper

    return decorate


def render_page(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    *,
    partials: Iterable[str] = (),
    part: str | None = None,
    status: int = 200,
) -> HttpResponse:
    """Render the full page, or (for an htmx request naming one in `?part=`) just that partial.

    The partial is a `{% partialdef %}` block of the same template, so a fragment cannot drift
    from the page that embeds it. A POST handler names the partial it answers with in `part`.
    """
    from runs_app.console_selectors import pending_approval_count

    part = part or request.GET.get("part", "")
    partials = {*partials, *([part] if part else [])}
    roles = console_roles(request)
    full = {
        **context,
        "roles": roles,
        "nav_projects": visible_projects(request),
    }
    if getattr(request, "htmx", False) and part in partials:
        return render(request, f"{template}#{part}", full, status=status)
    full["nav_pending_count"] = pending_approval_count(project_ids(request))
    return render(request, template, full, status=status)


class ConsoleLoginView(auth_views.LoginView):
    template_name = "login.html"
    redirect_authenticated_user = True


class ConsoleLogoutView(auth_views.LogoutView):
    pass


@require_GET
@console_page
def dashboard(request: HttpRequest) -> HttpResponse:
    from memory_app.console_selectors import held_count
    from runs_app.console_selectors import blocked_run_count, blocked_runs

    ids = project_ids(request)
    return render_page(
        request,
        "dashboard.html",
        {"blocked_count": blocked_run_count(ids), "blocked_runs": blocked_runs(ids), "held_memory": held_count(ids)},
    )


@require_GET
@console_page
def pending_count(request: HttpRequest) -> HttpResponse:
    """The navigation's pending-approval badge, polled by htmx."""
    from runs_app.console_selectors import pending_approval_count

    count = pending_approval_count(project_ids(request))
    return render(request, "base.html#pending-count", {"nav_pending_count": count})

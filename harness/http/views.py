"""The helpers every console page uses: who may see what, the page decorators, and rendering.

The console's own pages (login, logout, the overview) and its counts are the `console` app's.

Console pages authenticate with Django's session only; an API bearer token (agent or personal) is
never looked at here, so an agent cannot reach a page however it presents itself.
"""

from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from harness.http.context import context_of
from harness.models import Project
from harness.ops.replica import REPLICA, replica_reads
from harness.tenancy import Role, projects_for_user, user_has_role

PAGE = Callable[..., HttpResponse]


class ConsoleRequest(HttpRequest):
    """A console request: django-htmx's middleware adds `htmx` (falsy unless htmx sent it)."""

    htmx: HtmxDetails


def visible_projects(request: HttpRequest) -> list[Project]:
    """The projects this console user may see (by slug), computed once per request (kept in its context:
    harness.http.context)."""
    context = context_of(request)
    if context.console_projects is None:
        context.console_projects = list(projects_for_user(request.user).order_by("slug"))
    return context.console_projects


def project_ids(request: HttpRequest) -> list[int]:
    return [p.pk for p in visible_projects(request)]


def console_roles(request: HttpRequest) -> dict[str, bool]:
    """The roles the user holds in at least one project (what the navigation and a page's door ask); a button
    on a record asks `project_roles` for the record's own project, as its service will."""
    context = context_of(request)
    if context.console_roles is None:
        context.console_roles = {role: user_has_role(request.user, role) for role in Role.ALL}
    return context.console_roles


def project_roles(request: HttpRequest, project_id: int) -> dict[str, bool]:
    """The roles the user holds in this project (harness.tenancy, read once per request): a page about one
    project's record passes them as its `roles`, so it offers only what the service will allow."""
    return {role: user_has_role(request.user, role, None if role == Role.ADMIN else project_id) for role in Role.ALL}


def require_project_role(request: HttpRequest, role: str, project_id: int) -> None:
    """Refuse (403) an action on a record of a project where the user does not hold `role`: `role_required` lets
    in anyone holding it somewhere; this asks it for the record's own project, for a service that does not."""
    if not user_has_role(request.user, role, project_id):
        raise PermissionDenied(f"This needs the {role} role in this project.")


def console_page(view: PAGE) -> PAGE:
    """A console page: a logged-in, active user (Django's session; API tokens are never read here).

    An htmx request whose session has expired is sent to the login page as a whole page (HX-Redirect)
    rather than having the login form swapped into a fragment.
    """
    protected = login_required(view)

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if getattr(request, "htmx", False) and not request.user.is_authenticated:
            return HttpResponseClientRedirect(f"{settings.LOGIN_URL}?{urlencode({'next': request.path})}")
        match = request.resolver_match
        if (request.method == "GET" and match is not None and match.url_name in settings.HARNESS_REPLICA_PAGES
                and REPLICA in settings.DATABASES):
            with replica_reads():  # harness.ops.replica: only these pages' feature-app rows, never a write's
                return protected(request, *args, **kwargs)
        return protected(request, *args, **kwargs)

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


def asked_part(request: HttpRequest, partials: Iterable[str]) -> str:
    """The partial an htmx request asks for (`?part=` or its target's id) if it is one of `partials`."""
    htmx = getattr(request, "htmx", None)
    if not htmx:
        return ""
    asked = request.GET.get("part") or htmx.target or ""
    return asked if asked in set(partials) else ""


def render_page(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    *,
    partials: Iterable[str] = (),
    part: str | None = None,
    status: int = 200,
) -> HttpResponse:
    """Render the full page, or for an htmx request just the partial it asks for.

    The partial is a `{% partialdef %}` block of the same template, so a fragment cannot drift
    from the page that embeds it. An htmx request names one of `partials` by `?part=` or by its
    target's id (HX-Target); a POST handler names the partial it answers with in `part`.
    """
    htmx = getattr(request, "htmx", None)
    part = part or asked_part(request, partials)
    # A page about one project's record may pass its own `roles` (project_roles): its buttons follow them.
    full = {"roles": console_roles(request), **context, "nav_projects": visible_projects(request)}
    if htmx and part:
        return render(request, f"{template}#{part}", full, status=status)
    return render(request, template, full, status=status)

"""The console's own pages: login, logout, the overview, and the navigation badge htmx refreshes.

The counts these pages show come from console.context_processors (`counts.<name>` in templates).
"""

from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from console import audit
from console.charts import overview_charts
from console.context_processors import console_counts
from harness.actors import Actor
from harness.audit import audit_chain_check
from harness.http.throttling import login_failed, login_retry_after
from harness.http.views import asked_part, console_page, project_ids, render_page, role_required, visible_projects
from harness.tenancy import Role
from runs_app.selectors.overview import CHART_DAYS, blocked_runs, failure_counts
from runs_app.views.live import poll_of, unchanged


class ConsoleLoginView(auth_views.LoginView):
    """Django's login, with failed attempts counted per client address and username (HARNESS_LOGIN_RATE):
    over the limit, the form answers 429 with Retry-After and checks no password until the window ends."""

    template_name = "login.html"
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        username = str(request.POST.get("username", ""))
        retry_after = login_retry_after(request, username)
        if retry_after is not None:
            # An unbound form: a bound one would check the password when asked for its errors.
            form = self.get_form_class()(request, initial={"username": username})
            context = self.get_context_data(form=form, throttled_seconds=retry_after)
            response = self.render_to_response(context, status=429)
            response["Retry-After"] = str(retry_after)
            return response
        response = super().post(request, *args, **kwargs)
        if request.user.is_anonymous:  # the form was invalid: a wrong password, or an unknown user
            login_failed(request, username)
        return response


class ConsoleLogoutView(auth_views.LogoutView):
    pass


OVERVIEW_COUNTS = ("approvals_waiting", "pending_approvals", "blocked_runs", "held_memory")


@require_GET
@console_page
def dashboard(request: HttpRequest) -> HttpResponse:
    """The overview. Its counts poll themselves (runs_app.views.live): the counts are their own version, so an
    unchanged poll costs the counts' statements and renders nothing (204); the charts are not redrawn."""
    counts = console_counts(request)["counts"]
    version = ".".join(str(counts[name]) for name in OVERVIEW_COUNTS)
    live = poll_of(request, version, part="overview-counts")
    if asked_part(request, ("overview-counts",)):
        return unchanged(request, version) or render_page(
            request, "dashboard.html", {"live": live}, part="overview-counts")
    ids = project_ids(request)
    return render_page(request, "dashboard.html", {
        "live": live,
        "blocked_runs": blocked_runs(project_ids=ids),
        "charts": overview_charts(project_ids=ids),
        "chart_days": CHART_DAYS,
        "failure_counts": failure_counts(project_ids=ids),
    })


@require_GET
@console_page
def pending_count(request: HttpRequest) -> HttpResponse:
    """The navigation's pending-approval badge, polled by htmx (base.html#pending-count)."""
    return render(request, "base.html#pending-count")


@require_GET
@console_page
def audit_log(request: HttpRequest) -> HttpResponse:
    """Every audit entry of the user's projects, newest first, filtered by the URL's query, paged by seeking;
    above it, each project's chain as its last verification left it.

    A bad value in a filter is shown beside the form and that filter is not applied (the others are).
    """
    filters = audit.AuditLogFilter(request.GET)
    errors = {} if filters.is_valid() else filters.errors
    kept = request.GET.copy()
    for name in errors:
        for key in (name, f"{name}_after", f"{name}_before"):
            kept.pop(key, None)
    applied = audit.AuditLogFilter(kept)
    applied.is_valid()  # what is left is valid: every bad filter was dropped
    slug = request.GET.get("project", "")
    projects = [p for p in visible_projects(request) if not slug or p.slug == slug]
    page = audit.audit_page(project_ids=[p.pk for p in projects], refine=applied.filter_queryset,
                            after=request.GET.get("after"), before=request.GET.get("before"))
    query = request.GET.copy()
    for key in ("part", "after", "before"):
        query.pop(key, None)
    return render_page(request, "audit/audit_log.html", {
        "form": filters.form,
        "errors": errors,
        "page": page,
        "entries": audit.shown_entries(page.object_list),
        "chains": audit.chain_states(projects),
        "query": query.urlencode(),
        "project": slug,
        "target_types": sorted(audit.TARGET_PAGES),
    }, partials=("audit-table",))


@require_POST
@console_page
@role_required(Role.OPERATOR)
def audit_verify(request: HttpRequest) -> HttpResponse:
    """Verify a project's chain now: from the entries the last check found sound, or from the first entry
    (`from_start`, which also finds an entry altered without re-chaining)."""
    project = next((p for p in visible_projects(request) if p.slug == request.POST.get("project")), None)
    if project is None:
        raise Http404("No such project.")
    from_start = request.POST.get("from_start") == "on"
    (report,) = audit_chain_check(project_ids=[project.pk], checked_by=Actor.of(request.user).label,
                                  from_start=from_start)
    if report.breaks:
        messages.error(request, f"{project.slug}: the audit chain is broken (breaks: {len(report.breaks)}).")
    else:
        messages.success(request, f"{project.slug}: the audit chain is sound up to entry {report.verified_seq}.")
    return redirect("audit_log")

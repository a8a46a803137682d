"""The console's own pages: login, logout, the overview, and the navigation badge htmx refreshes.

The counts these pages show come from console.context_processors (`counts.<name>` in templates).
"""

from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.charts import overview_charts
from harness.views import console_page, project_ids, render_page
from runs_app.selectors import CHART_DAYS, blocked_runs


class ConsoleLoginView(auth_views.LoginView):
    template_name = "login.html"
    redirect_authenticated_user = True


class ConsoleLogoutView(auth_views.LogoutView):
    pass


@require_GET
@console_page
def dashboard(request: HttpRequest) -> HttpResponse:
    ids = project_ids(request)
    return render_page(request, "dashboard.html", {
        "blocked_runs": blocked_runs(project_ids=ids),
        "charts": overview_charts(project_ids=ids),
        "chart_days": CHART_DAYS,
    })


@require_GET
@console_page
def pending_count(request: HttpRequest) -> HttpResponse:
    """The navigation's pending-approval badge, polled by htmx (base.html#pending-count)."""
    return render(request, "base.html#pending-count")

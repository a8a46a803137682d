"""The console's own pages: login, logout, the overview, and the navigation badge htmx refreshes.

The counts these pages show come from console.context_processors (`counts.<name>` in templates).
"""

from typing import Any

from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.charts import overview_charts
from harness.throttling import login_failed, login_retry_after
from harness.views import console_page, project_ids, render_page
from runs_app.selectors import CHART_DAYS, blocked_runs, failure_counts


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


@require_GET
@console_page
def dashboard(request: HttpRequest) -> HttpResponse:
    ids = project_ids(request)
    return render_page(request, "dashboard.html", {
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

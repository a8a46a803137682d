"""The console's HTML pages (HTMX), at the site root: its own pages, then each app's."""

from django.urls import include, path

from console import profile, projects, views

urlpatterns = [
    path("login/", views.ConsoleLoginView.as_view(), name="login"),
    path("logout/", views.ConsoleLogoutView.as_view(), name="logout"),
    path("", views.dashboard, name="dashboard"),
    path("approvals/count/", views.pending_count, name="pending_count"),
    path("audit/", views.audit_log, name="audit_log"),
    path("audit/verify/", views.audit_verify, name="audit_verify"),
    path("profile/", profile.profile, name="profile"),
    path("profile/tokens/", profile.token_create, name="profile_token_create"),
    path("profile/tokens/<int:token_id>/rotate/", profile.token_rotate, name="profile_token_rotate"),
    path("profile/tokens/<int:token_id>/revoke/", profile.token_revoke, name="profile_token_revoke"),
    path("projects/", projects.project_list, name="project_list"),
    path("projects/<slug:slug>/freeze/", projects.project_freeze_view, name="project_freeze"),
    path("projects/<slug:slug>/unfreeze/", projects.project_unfreeze_view, name="project_unfreeze"),
    path("", include("runs_app.views.urls")),
    path("", include("sessions_app.urls")),
    path("memory/", include("memory_app.urls")),
    path("webhooks/", include("notify_app.urls")),
    path("bundles/", include("bundles_app.urls")),
]

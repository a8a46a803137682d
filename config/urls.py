from django.contrib import admin
from django.urls import include, path

from harness.ops.health import healthz, readyz
from harness.ops.metrics import metrics_view

urlpatterns = [
    # Served through harness.http.handlers' probe chain (no session, CSRF or host check); see harness.ops.health.
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/", include("config.api_urls")),
    path("", include("console.urls")),
]

# /api/ answers an unknown URL in the API's error shape; elsewhere Django's page stands.
handler404 = "harness.http.api_base.not_found"

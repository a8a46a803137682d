"""/api/: the OpenAPI schema, its docs (assets from drf-spectacular-sidecar: no CDN), and every app's v1 endpoints."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("v1/", include("sessions_app.api_urls")),
    path("v1/", include("runs_app.api.urls")),
    path("v1/", include("notify_app.api_urls")),
    path("v1/memory/", include("memory_app.api_urls")),
    path("v1/", include("bundles_app.api_urls")),
]

"""/api/: the OpenAPI schema, its docs, and every app's v1 endpoints."""

from django.urls import include, path

urlpatterns = [
    path("v1/", include("sessions_app.api_urls")),
    path("v1/", include("runs_app.api_urls")),
    path("v1/memory/", include("memory_app.api_urls")),
]

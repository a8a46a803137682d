"""Console URLs for bundles, mounted at /bundles/ (the API lives in bundles_app.api_urls)."""

from django.urls import path

from bundles_app import views

app_name = "bundles"

urlpatterns = [
    path("", views.bundle_list, name="bundle_list"),
    path("<int:bundle_id>/", views.bundle_detail, name="bundle_detail"),
    path("export/<slug:kind>/<int:root_id>/", views.bundle_export_view, name="bundle_export"),
]

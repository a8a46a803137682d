from django.urls import path

from bundles_app import api

urlpatterns = [
    path("bundles/export/", api.BundleExportView.as_view(), name="bundle-export"),
    path("bundles/import/", api.BundleImportView.as_view(), name="bundle-import"),
]

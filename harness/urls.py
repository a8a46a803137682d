from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("harness.api_urls")),
    path("", include("console.urls")),
]

# /api/ answers an unknown URL in the API's error shape; elsewhere Django's page stands.
handler404 = "harness.api_base.not_found"

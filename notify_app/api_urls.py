"""/api/v1/webhooks/..."""

from django.urls import path

from harness.http import api_base  # noqa: F401 - registers the <id:...> converter
from notify_app import api

urlpatterns = [
    path("webhooks/", api.WebhookListCreateApi.as_view(), name="api-webhooks"),
    path("webhooks/<id:pk>/deactivate/", api.WebhookDeactivateApi.as_view(), name="api-webhook-deactivate"),
]

"""Console URLs of notify_app (the API lives in notify_app.api_urls)."""

from django.urls import path

from notify_app import views

app_name = "notify"

urlpatterns = [
    path("", views.delivery_log, name="delivery_log"),
]

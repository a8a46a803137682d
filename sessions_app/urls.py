"""Console URLs for sessions (the API lives in sessions_app.api_urls)."""

from django.urls import path

from sessions_app import views

app_name = "sessions"

urlpatterns = [
    path("sessions/", views.session_list, name="session_list"),
    path("sessions/<int:session_id>/", views.session_timeline, name="session_timeline"),
]

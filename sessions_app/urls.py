"""Console URLs for sessions (the API lives in sessions_app.api_urls)."""

from django.urls import path

from sessions_app import views

app_name = "sessions"

urlpatterns = [
    path("sessions/", views.session_list, name="session_list"),
    path("sessions/<int:session_id>/", views.session_timeline, name="session_timeline"),
    path("sessions/<int:session_id>/trim/", views.session_trim, name="session_trim"),
    path("sessions/<int:session_id>/compact/", views.session_compact, name="session_compact"),
]

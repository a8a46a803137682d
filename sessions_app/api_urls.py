"""/api/v1/sessions/..."""

from django.urls import path

from harness import api_base  # noqa: F401 - registers the <id:...> converter
from sessions_app import api

urlpatterns = [
    path("sessions/", api.SessionListCreateApi.as_view(), name="api-sessions"),
    path("sessions/<id:pk>/", api.SessionDetailApi.as_view(), name="api-session"),
    path("sessions/<id:pk>/transition/", api.SessionTransitionApi.as_view(), name="api-session-transition"),
    path("sessions/<id:pk>/items/", api.SessionItemsApi.as_view(), name="api-session-items"),
    path("sessions/<id:pk>/items/latest/", api.SessionItemsLatestApi.as_view(), name="api-session-items-latest"),
    path("sessions/<id:pk>/items/pop/", api.SessionItemsPopApi.as_view(), name="api-session-items-pop"),
    path("sessions/<id:pk>/items/clear/", api.SessionItemsClearApi.as_view(), name="api-session-items-clear"),
    path("sessions/<id:pk>/items/trim/", api.SessionItemsTrimApi.as_view(), name="api-session-items-trim"),
    path("sessions/<id:pk>/items/compact/", api.SessionItemsCompactApi.as_view(), name="api-session-items-compact"),
]

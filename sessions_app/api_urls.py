"""/api/v1/sessions/..."""

from django.urls import path

from harness.http import api_base  # noqa: F401 - registers the <id:...> converter
from harness.http.plain import plain_first
from sessions_app import api, api_tokens

urlpatterns = [
    path("sessions/", api.SessionListCreateApi.as_view(), name="api-sessions"),
    path("sessions/<id:pk>/", api.SessionDetailApi.as_view(), name="api-session"),
    path("sessions/<id:pk>/transition/", api.SessionTransitionApi.as_view(), name="api-session-transition"),
    # The agent's hottest calls try the plain path first (harness.http.plain).
    path("sessions/<id:pk>/items/", plain_first(api.SessionItemsApi, post=api.items_append_plain),
         name="api-session-items"),
    path("sessions/<id:pk>/items/latest/", plain_first(api.SessionItemsLatestApi, get=api.items_latest_plain),
         name="api-session-items-latest"),
    path("sessions/<id:pk>/items/pop/", api.SessionItemsPopApi.as_view(), name="api-session-items-pop"),
    path("sessions/<id:pk>/items/clear/", api.SessionItemsClearApi.as_view(), name="api-session-items-clear"),
    path("sessions/<id:pk>/items/trim/", api.SessionItemsTrimApi.as_view(), name="api-session-items-trim"),
    path("sessions/<id:pk>/items/compact/", api.SessionItemsCompactApi.as_view(), name="api-session-items-compact"),
    path("tokens/narrow/", api_tokens.NarrowTokenApi.as_view(), name="api-tokens-narrow"),
]

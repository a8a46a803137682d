"""Every request's observation: a request id, the log context, and its latency and status by route.

First in both middleware chains (settings.MIDDLEWARE and API_MIDDLEWARE), so what it times and the ids it
binds cover everything after it. It costs no database round trip: the metrics are process memory
(harness.ops.metrics) and the access line is one log record (HARNESS_ACCESS_LOG=0 turns it off).
"""

import logging
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

from harness.ops import logs
from harness.ops.metrics import observe_request

log = logging.getLogger("harness.request")

# An id a caller (or the proxy) sends is kept only if it is this plain: it goes into every log line.
_INCOMING_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
# The ids a URL names, by its first segment (the API's `runs/<id:pk>/`) or by the keyword itself (the console's
# `runs/<int:run_id>/`).
_SEGMENT_IDS = {"runs": "run", "approvals": "approval", "sessions": "session", "effects": "effect", "tasks": "task"}
_KWARG_IDS = {"run_id": "run", "approval_id": "approval", "session_id": "session", "effect_id": "effect",
              "task_id": "task"}


def request_id_of(request: HttpRequest) -> str:
    incoming = request.META.get("HTTP_X_REQUEST_ID", "")
    return incoming if _INCOMING_ID.match(incoming) else uuid.uuid4().hex


class RequestObservationMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.access_log: bool = getattr(settings, "HARNESS_ACCESS_LOG", True)

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        request_id = request_id_of(request)
        started = time.perf_counter()
        with logs.scope(request_id=request_id):
            response = self.get_response(request)  # Django turns an exception below into a response
            seconds = time.perf_counter() - started
            match = request.resolver_match
            route = match.route if match is not None else "unmatched"
            observe_request(request.method or "", route, response.status_code, seconds)
            response["X-Request-ID"] = request_id
            if self.access_log:
                logs.info_line(log, f"{request.method} {route} {response.status_code}",
                               {"status": response.status_code, "duration_ms": round(seconds * 1000, 2)})
        return response

    def process_view(self, request: HttpRequest, view: Callable[..., Any], args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> None:
        ids: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in _KWARG_IDS:
                ids[_KWARG_IDS[key]] = value
        match = request.resolver_match
        if "pk" in kwargs and match is not None:
            segment = match.route.removeprefix("api/v1/").removeprefix("memory/").split("/", 1)[0]
            if segment in _SEGMENT_IDS:
                ids[_SEGMENT_IDS[segment]] = kwargs["pk"]
        if ids:
            logs.bind(**ids)

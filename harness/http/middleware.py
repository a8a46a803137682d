"""Request limits enforced before any view parses a body: size (413) and JSON nesting depth (400).

Both answer in the API's one error shape, so a hostile body never reaches a parser that could
recurse or allocate without bound (a deep JSON array makes `json.loads` raise RecursionError: a 500).
"""

import re
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse

# A JSON string literal, escapes included: brackets inside strings do not nest anything.
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[\[\]{}]")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def error_response(status: int, code: str, detail: str) -> JsonResponse:
    return JsonResponse({"code": code, "detail": detail}, status=status)


def json_depth(body: bytes, stop_above: int | None = None) -> int:
    """The deepest nesting of arrays/objects in a JSON text (malformed text is left to the parser).

    With `stop_above`, the scan ends as soon as the nesting goes deeper than that: a hostile body
    is refused after its first few brackets, not after a walk over a megabyte of them.
    """
    depth = deepest = 0
    for match in _BRACKETS.finditer(_JSON_STRING.sub(b'""', body)):
        if match.group() in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_above is not None and deepest > stop_above:
                    break
        else:
            depth -= 1
    return deepest


def _may_nest_deeper(body: bytes, max_depth: int) -> bool:
    """Whether the body has more opening brackets than `max_depth`, strings included: one with no more cannot nest
    deeper, and two counts in C (about 1 µs on a 1 KB body) spare every ordinary request json_depth's scan
    (about 50 µs: bench/cpu_per_request.py)."""
    return body.count(b"[") + body.count(b"{") > max_depth


class RequestLimitsMiddleware:
    """Refuse bodies over DATA_UPLOAD_MAX_MEMORY_SIZE (413), chunked bodies (411) and JSON deeper than
    HARNESS_MAX_JSON_DEPTH (400)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in _BODY_METHODS:
            refused = self._check(request)
            if refused is not None:
                return refused
        return self.get_response(request)

    def _check(self, request: HttpRequest) -> HttpResponse | None:
        limit: int = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        chunked = "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and not request.META.get("CONTENT_LENGTH"):
            # WSGI hands Django no length for a chunked body, and Django then reads it as empty: the
            # request would run as if it carried no body at all (found by reliability experiment 13).
            return error_response(411, "length_required",
                                  "Send the body with a Content-Length; chunked bodies are not read.")
        raw_length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            length = int(raw_length)
        except ValueError:
            return error_response(400, "invalid_content_length", "Content-Length is not a number.")
        if length > limit:
            return error_response(413, "body_too_large", f"The request body is over {limit} bytes.")
        if not request.content_type or "json" not in request.content_type:
            return None
        try:
            # Read once here (Django caches it) so a chunked body without a length is capped too.
            body = request.body
        except RequestDataTooBig:
            return error_response(413, "body_too_large", f"The request body is over {limit} bytes.")
        max_depth: int = settings.HARNESS_MAX_JSON_DEPTH
        if _may_nest_deeper(body, max_depth) and json_depth(body, stop_above=max_depth) > max_depth:
            return error_response(400, "json_too_deep", f"JSON may nest at most {max_depth} levels.")
        return None


class ImportedRefusalMiddleware:
    """A console or admin write that a trigger refused because its row was imported read-only (bundles_app) is
    answered 409 `imported_read_only` with the reason, not a 500 (the API words it in harness.http.errors)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        from harness.http.errors import imported_refusal_of

        refusal = imported_refusal_of(exception)
        if refusal is None:
            return None
        if request.path.startswith("/api/"):
            return error_response(409, refusal.code, refusal.detail)
        from django.utils.html import escape

        return HttpResponse(f"<!doctype html><title>Read-only</title><h1>Imported records are read-only</h1>"
                            f"<p>{escape(refusal.detail)}</p><p><code>{refusal.code}</code></p>", status=409)

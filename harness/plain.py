"""The agent's hottest calls answered without DRF's dispatch: the plain path (issue 14).

An agent's append, newest-items read, checkpoint write and lineage read are most of what it sends, and DRF's
dispatch (its Request, the authentication, permission and throttle classes, negotiation, parsing, rendering) was
about half of such a call's CPU (bench/README.md, "CPU per agent call"). For these operations the URL's view is
`plain_first(TheDrfView, post=a_plain_function)`. The request still goes through Django's handler and every
middleware (observation, limits, host check, the Idempotency-Key's claim); then the plain function answers it when
it is the plain case: an agent token that may make the call, no content negotiation to do, a JSON body in the
plain well-formed shape. It calls the same pieces the DRF view's path calls (harness.auth's token lookup and
touch, harness.throttling's count, the app's validation, service and reply, harness.errors' mapping), in the
same order.

Anything else is handed to the DRF view, which answers it as it always did: a missing, bad or revoked token, a
personal token, a refused role, a frozen project, a throttled token, an Accept or ?format= to negotiate, a body
in any other shape. Nothing has been written when that happens, and nothing is done twice: the token the plain
function found is reused (harness.auth.FOUND_TOKEN_ATTR), and so is its throttle count (COUNTED_ATTR).

The DRF view stays the URL's documented view (the OpenAPI schema is generated from it). HARNESS_PLAIN_PATH=0
sends every call through it; tests/api/test_plain_path.py holds the two doors to the same answers, status,
headers, body and rows.
"""

import codecs
import functools
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from rest_framework.views import APIView

from harness import logs
from harness.auth import AgentPrincipal, bearer_token, touch_last_used
from harness.errors import NOT_FINAL_ATTR, ErrorReply, error_reply
from harness.models import ApiToken
from harness.parsers import NOT_PLAIN, parse_plain
from harness.permissions import TokenRole
from harness.renderers import JSONRenderer
from harness.throttling import COUNTED_ATTR, token_wait

PlainHandler = Callable[..., HttpResponse | None]
_render = JSONRenderer().render
_JSON = "application/json"


def plain_first(view_class: type[APIView], **handlers: PlainHandler) -> Callable[..., HttpResponse]:
    """The URL's view: `view_class`'s, with a plain function tried first for the methods named (post=..., get=...).

    A plain function returns its response, or None to hand the request to DRF's view. What URL introspection reads
    off a DRF view comes along (`cls`, `view_class` for the Idempotency-Key's claim, `csrf_exempt`), so the schema,
    the middleware and the CSRF check see the DRF view."""
    drf_view = view_class.as_view()
    plain = {method.upper(): handler for method, handler in handlers.items()}
    instance = view_class()
    instance.setup(HttpRequest())  # as a request's does: a view with get() answers HEAD too
    allow = ", ".join(instance.allowed_methods)  # DRF's Allow header on every reply of the view

    def view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        handler = plain.get(request.method or "")
        if handler is not None and settings.HARNESS_PLAIN_PATH:
            try:
                response = handler(request, **kwargs)
            except Exception as exc:
                reply = error_reply(exc)
                if reply is None:
                    raise  # Django's handler answers it, as it answers what escapes a DRF view
                response = refusal(reply)
            if response is not None:
                response["Allow"] = allow
                return response
        return drf_view(request, *args, **kwargs)

    functools.update_wrapper(view, drf_view)
    return view


def plain_caller(request: HttpRequest, *, write: bool) -> AgentPrincipal | None:
    """The caller of a plain call, authenticated, authorised, throttled and bound to the log context as the DRF
    view's BearerTokenAuthentication, AgentApiAccess and TokenRateThrottle do it; None where their answer is
    anything but "go on" (DRF's view then gives it, from the token and the count made here)."""
    if not _answers_json(request):
        return None
    header = request.META.get("HTTP_AUTHORIZATION", "").split()
    if len(header) != 2 or header[0].lower() != "bearer":
        return None
    token = bearer_token(request, ApiToken.hash_secret(header[1]))
    if token is None or token.kind != ApiToken.Kind.AGENT or token.project is None:
        return None
    touch_last_used(token)
    # A handoff receiver calls only the views that scope it to its handoff (harness.permissions); a reader reads.
    if token.role not in (TokenRole.ALL if not write else TokenRole.WRITERS) or \
            token.role == TokenRole.HANDOFF_RECEIVER:
        return None
    if write and token.project.frozen_at is not None:
        return None  # 409 project_frozen, not final: harness.auth words it
    logs.bind(project=token.project.slug)
    wait = token_wait(token)
    setattr(request, COUNTED_ATTR, (token, wait))
    if wait is not None:
        return None  # 429 with Retry-After, from the count just made
    caller = AgentPrincipal(token=token, project=token.project)
    request.user = caller  # type: ignore[assignment]  # what DRF leaves on the request after its authentication
    return caller


def _answers_json(request: HttpRequest) -> bool:
    """Whether DRF's negotiation would pick the JSON renderer without parsing the Accept header
    (harness.renderers.ContentNegotiation's short way): no ?format=, and any or exactly JSON accepted."""
    accept = request.META.get("HTTP_ACCEPT", "*/*")
    return (accept == "*/*" or accept == _JSON) and "format=" not in request.META.get("QUERY_STRING", "")


def plain_body(request: HttpRequest) -> Any:
    """A JSON body's value, as StrictJSONParser would give it; NOT_PLAIN for anything the parser would word
    (another media type or charset, malformed or unstorable JSON, an integer orjson may not keep exact)."""
    if request.content_type != _JSON or not _utf8((request.content_params or {}).get("charset")):
        return NOT_PLAIN
    return parse_plain(request.body)


@functools.cache
def _utf8(charset: str | None) -> bool:
    try:
        return codecs.lookup(charset or settings.DEFAULT_CHARSET).name == "utf-8"
    except LookupError:
        return False


def json_reply(body: Any, *, status: int = 200) -> HttpResponse:
    """The reply DRF's Response(body, status) renders, with the same renderer."""
    return HttpResponse(_render(body), status=status, content_type=_JSON)


def refusal(reply: ErrorReply) -> HttpResponse:
    """harness.errors.api_exception_handler's answer, rendered."""
    response = json_reply(reply.body, status=reply.status)
    for name, value in reply.headers.items():
        response[name] = value
    if not reply.final:
        setattr(response, NOT_FINAL_ATTR, True)
    return response


__all__ = ["NOT_PLAIN", "json_reply", "plain_body", "plain_caller", "plain_first", "refusal"]

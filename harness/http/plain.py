"""The agent's hottest calls answered without DRF's dispatch: the plain path (issue 14).

An agent's append, newest-items read, checkpoint write and lineage read are most of what it sends, and DRF's
dispatch (its Request, the authentication, permission and throttle classes, negotiation, parsing, rendering) was
about half of such a call's CPU (bench/README.md, "CPU per agent call"). For these operations the URL's view is
`plain_first(TheDrfView, post=a_plain_function)`. The request still goes through Django's handler and every
middleware (observation, limits, host check, the Idempotency-Key's claim); then the plain function answers it when
it is the plain case: an agent token that may make the call, no content negotiation to do, a JSON body in the
plain well-formed shape.

It is a second door, not a second pipeline: each cross-cutting step is one function both doors call
(docs/development/request-flow.md has the table):
- the token: harness.http.auth.bearer_token (one lookup, or the one the Idempotency-Key's reservation made), then
  harness.http.auth.token_used (its last use, the log's project);
- whether it may call: harness.http.permissions.agent_call_refusal (DRF's AgentApiAccess raises its refusal; here
  any refusal hands over), and for a known token the statement's own check holds roles_that_may_call;
- the throttle: harness.http.throttling.counted_wait, once per request whichever door counts;
- the Idempotency-Key: harness.http.idempotency.claim_of;
- validation, the service and the reply: the app's (`*_fast` shape checks the serializer is held to, the same
  service, the same answer function);
- errors: harness.http.errors.error_reply, which DRF's exception handler also renders.
What one step learned is kept in the request's context (harness.http.context.RequestContext) for the next.

Anything else is handed to the DRF view, which answers it as it always did: a missing, bad or revoked token, a
personal token, a refused role, a frozen project, a throttled token, an Accept or ?format= to negotiate, a body
in any other shape, a token narrowed to one end user (its selectors confine it there). Nothing has been written
when that happens, and nothing is done twice: the token the plain function found and its throttle count are in
the request's context, where DRF's authentication and throttle find them.

The DRF view stays the URL's documented view (the OpenAPI schema is generated from it). HARNESS_PLAIN_PATH=0
sends every call through it; tests/api/test_plain_path.py holds the two doors to the same answers, status,
headers, body and rows.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from rest_framework.views import APIView

from harness.http.auth import AgentPrincipal, TokenCheck, as_first_statement, bearer_token, token_used
from harness.http.context import context_of
from harness.http.errors import NOT_FINAL_ATTR, ErrorReply, error_reply
from harness.http.idempotency import claim_of
from harness.http.parsers import NOT_PLAIN, is_utf8, parse_plain
from harness.http.permissions import agent_call_refusal, roles_that_may_call
from harness.http.renderers import JSONRenderer
from harness.http.throttling import counted_wait
from harness.models import ApiToken, Project

PlainHandler = Callable[..., HttpResponse | None]
_T = TypeVar("_T")
_V = TypeVar("_V")
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
                caller = caller_of(request)
                response = refusal(reply)
                # A 5xx (the database out of reach) is nobody's token's doing: answered as it is, without the
                # token lookup vouching would make against that same unreachable database.
                if caller is not None and reply.status < 500:
                    response = caller.vouched(request, response)
            if response is not None:
                response["Allow"] = allow
                return response
        return drf_view(request, *args, **kwargs)

    functools.update_wrapper(view, drf_view)
    return view


# The roles the one may-call rule admits on a plain call, for a known token's statement to check (TokenCheck).
_ROLES = {write: roles_that_may_call(write=write) for write in (False, True)}

# The tokens this process has looked up and found fit for a plain call, by digest. Only a hint: a call that takes
# its token from here has the token checked by its own statement (harness.http.auth.TokenCheck), never by this copy; the
# copy gives what does not change (the ids for the throttle's key and the log, the project) and what is checked
# again there. Bounded: a process serves a handful of agents' tokens.
_known: dict[str, ApiToken] = {}
_KNOWN_MAX = 1024


@dataclass(frozen=True)
class PlainCaller:
    principal: AgentPrincipal
    digest: str
    write: bool
    check: TokenCheck | None  # None: this request looked the token up itself

    @property
    def project(self) -> Project:
        return self.principal.project

    def vouched(self, request: HttpRequest, response: HttpResponse) -> HttpResponse | None:
        """`response` when the caller's token is good for it, else None (DRF's view answers). A fresh answer of
        a statement that carried the check is vouched for by that statement; a refusal or a stored reply may be
        what a token that no longer holds got (the statement wrote nothing), so the token is looked up now, and
        any change from the copy this process kept hands the request to DRF's view, which decides afresh."""
        if self.check is None:
            return response
        _known.pop(self.digest, None)
        token = bearer_token(request, self.digest)
        kept = self.principal.token
        if (token is None or not _may_call(token, self.write) or token.role != kept.role
                or token.project_id != kept.project_id):
            return None
        _remember(self.digest, token)
        return response

    def first_statement(self, request: HttpRequest, run: Callable[[], _T]) -> _T:
        """`run()`, whose first statement is the request's first when this request looked no token up: it then
        stands in for Django's health check (a `SELECT 1` round trip: harness.http.auth.as_first_statement), and runs
        again on a new connection if the persistent one was dropped. Only what is safe to repeat: a read, or a
        write under an Idempotency-Key (a repeat of a write that did commit is answered from its key). A keyless
        write keeps the health check."""
        if self.write and claim_of(request) is None:
            return run()
        return as_first_statement(run)


def _may_call(token: ApiToken | None, write: bool) -> bool:
    """An agent token (a personal one is DRF's to authenticate) that the one may-call rule admits here
    (harness.http.permissions.agent_call_refusal, with no view: a plain call admits no handoff receiver and no token
    narrowed to one end user, whose selectors DRF's view runs). Any refusal is DRF's view's to word."""
    return (token is not None and token.kind == ApiToken.Kind.AGENT and token.project is not None
            and agent_call_refusal(token, write=write) is None)


def caller_of(request: HttpRequest) -> PlainCaller | None:
    """The request's plain caller (harness.http.context), once plain_caller found one."""
    caller: PlainCaller | None = context_of(request).caller
    return caller


def _remember(digest: str, token: ApiToken) -> None:
    if len(_known) >= _KNOWN_MAX:
        _known.clear()
    _known[digest] = token


def plain_caller(request: HttpRequest, *, write: bool) -> PlainCaller | None:
    """The caller of a plain call, authenticated, authorised, throttled and bound to the log context as the DRF
    view's BearerTokenAuthentication, AgentApiAccess and TokenRateThrottle do it; None where their answer is
    anything but "go on" (DRF's view then gives it, from the token and the count made here).

    A token this process knows is not looked up: the call's statement checks it (PlainCaller.check), and an answer
    that statement did not vouch for goes through PlainCaller.vouched."""
    if not _answers_json(request):
        return None
    header = request.META.get("HTTP_AUTHORIZATION", "").split()
    if len(header) != 2 or header[0].lower() != "bearer":
        return None
    digest = ApiToken.hash_secret(header[1])
    token = _known.get(digest)
    known = token is not None and _may_call(token, write)
    if not known:
        token = bearer_token(request, digest)
        if token is None or not _may_call(token, write):
            return None  # 401, 403 or 409 project_frozen (not final): DRF words it, with this lookup
        _remember(digest, token)
    assert token is not None and token.project is not None  # noqa: S101 - _may_call checked both
    project = token.project
    check = TokenCheck(digest=digest, project_id=project.pk, roles=_ROLES[write], write=write) if known else None
    token_used(token)
    if counted_wait(request, token) is not None:
        return None  # 429 with Retry-After, from the count just made
    principal = AgentPrincipal(token=token, project=project)
    request.user = principal  # type: ignore[assignment]  # what DRF leaves on the request after its authentication
    caller = context_of(request).caller = PlainCaller(principal=principal, digest=digest, write=write, check=check)
    return caller


def plain_write(request: HttpRequest, plain_shape: Callable[[Any], _V | None],
                answer: Callable[[PlainCaller, _V], dict[str, Any] | HttpResponse]) -> HttpResponse | None:
    """A plain write: its caller, its body in the plain well-formed shape (`plain_shape` gives the validated data,
    or None for the serializer to word), and `answer`'s 201 body or the reply stored under its key; None hands the
    request to DRF's view."""
    caller = plain_caller(request, write=True)
    if caller is None:
        return None
    data = plain_body(request)
    valid = plain_shape(data) if data is not NOT_PLAIN else None
    if valid is None:
        return None
    body = caller.first_statement(request, lambda: answer(caller, valid))
    if isinstance(body, HttpResponse):
        return caller.vouched(request, body)
    return json_reply(body, status=201)


def plain_read(request: HttpRequest, read: Callable[[PlainCaller], str | bytes]) -> HttpResponse | None:
    """A plain read: its caller, and the JSON text PostgreSQL wrote for it (`read`), sent as it comes; None hands
    the request to DRF's view."""
    caller = plain_caller(request, write=False)
    if caller is None:
        return None
    return HttpResponse(caller.first_statement(request, lambda: read(caller)), content_type=_JSON)


def _answers_json(request: HttpRequest) -> bool:
    """Whether DRF's negotiation would pick the JSON renderer without parsing the Accept header
    (harness.http.renderers.ContentNegotiation's short way): no ?format=, and any or exactly JSON accepted."""
    accept = request.META.get("HTTP_ACCEPT", "*/*")
    return (accept == "*/*" or accept == _JSON) and "format=" not in request.META.get("QUERY_STRING", "")


def plain_body(request: HttpRequest) -> Any:
    """A JSON body's value, as StrictJSONParser would give it; NOT_PLAIN for anything the parser would word
    (another media type or charset, malformed or unstorable JSON, an integer orjson may not keep exact)."""
    if request.content_type != _JSON or not is_utf8((request.content_params or {}).get("charset")):
        return NOT_PLAIN
    return parse_plain(request.body)


def json_reply(body: Any, *, status: int = 200) -> HttpResponse:
    """The reply DRF's Response(body, status) renders, with the same renderer."""
    return HttpResponse(_render(body), status=status, content_type=_JSON)


def refusal(reply: ErrorReply) -> HttpResponse:
    """harness.http.errors.api_exception_handler's answer, rendered."""
    response = json_reply(reply.body, status=reply.status)
    for name, value in reply.headers.items():
        response[name] = value
    if not reply.final:
        setattr(response, NOT_FINAL_ATTR, True)
    return response


__all__ = ["NOT_PLAIN", "PlainCaller", "json_reply", "plain_body", "plain_caller", "plain_first", "plain_read",
           "plain_write", "refusal"]

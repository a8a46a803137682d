"""The WSGI handler: agent API calls take a shorter middleware chain than the console's pages.

An agent's call (`/api/v1/`, `Authorization: Bearer ...`) uses none of the browser's middleware: no
session, no CSRF (a bearer token is not ambient authority), no messages, no console user, no htmx, no
frame options on JSON. `bench/cpu_per_request.py` measures a keyed append's CPU in the Django process
through each chain: 0.02-0.1 ms of 1.0-1.3 ms saved (2-7%, three runs at 222e9b8 on a busy 2-core VM;
issue 14). Small, but every agent call pays it. Everything else (pages, the admin, the schema and its
docs, the API called from the console with a session cookie) keeps the full chain.
"""

from django.conf import settings
from django.core.handlers.base import BaseHandler
from django.core.handlers.wsgi import WSGIHandler
from django.http import HttpRequest, HttpResponseBase
from django.urls import ResolverMatch, get_resolver

API_PREFIX = "/api/v1/"


def is_agent_call(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX) and request.META.get(
        "HTTP_AUTHORIZATION", "")[:7].lower() == "bearer "


# The probes and the metrics (harness.health, harness.metrics) take a chain of their own: no session, no CSRF,
# and no host check (CommonMiddleware's): a load balancer or Prometheus asks by the machine's address, not by
# the public host name in ALLOWED_HOSTS, and these answers build no URL a forged Host could poison.
PROBE_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


def resolved(request: HttpRequest) -> ResolverMatch:
    """The request's view, resolved once: a middleware that must know the view before the handler calls it (the
    Idempotency-Key's, harness.idempotency) resolves it here, and the handlers below reuse the match instead of
    resolving the path again (30-50 µs of CPU on every API call: bench/cpu_per_request.py). Raises Resolver404."""
    match = request.resolver_match
    if match is None:
        match = request.resolver_match = get_resolver(getattr(request, "urlconf", None)).resolve(request.path_info)
    return match


class _ResolveOnce(BaseHandler):
    def resolve_request(self, request: HttpRequest) -> ResolverMatch:
        if request.resolver_match is not None and not hasattr(request, "urlconf"):
            return request.resolver_match  # resolved by a middleware (`resolved` above), for this same path
        return super().resolve_request(request)


class _Chain(_ResolveOnce):
    """A handler whose chain is another list of middleware (built once, at start-up, like the full one)."""

    def __init__(self, middleware: list[str]) -> None:
        super().__init__()
        self.middleware = middleware

    def load_middleware(self, is_async: bool = False) -> None:
        full = settings.MIDDLEWARE
        settings.MIDDLEWARE = self.middleware
        try:
            super().load_middleware(is_async)
        finally:
            settings.MIDDLEWARE = full


class HarnessWSGIHandler(_ResolveOnce, WSGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async)
        self.api_chain = _Chain(settings.API_MIDDLEWARE)
        self.api_chain.load_middleware(is_async)
        self.probe_chain = _Chain(settings.PROBE_MIDDLEWARE)
        self.probe_chain.load_middleware(is_async)

    def get_response(self, request: HttpRequest) -> HttpResponseBase:
        if is_agent_call(request):
            return self.api_chain.get_response(request)
        if request.path_info in PROBE_PATHS:
            return self.probe_chain.get_response(request)
        return super().get_response(request)

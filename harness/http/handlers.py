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
from django.urls import ResolverMatch, get_resolver, set_urlconf

API_PREFIX = "/api/v1/"


def is_agent_call(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX) and request.META.get(
        "HTTP_AUTHORIZATION", "")[:7].lower() == "bearer "


# The probes and the metrics (harness.ops.health, harness.ops.metrics) take a chain of their own: no session, no CSRF,
# and no host check (CommonMiddleware's): a load balancer or Prometheus asks by the machine's address, not by
# the public host name in ALLOWED_HOSTS, and these answers build no URL a forged Host could poison.
PROBE_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


def resolved(request: HttpRequest) -> ResolverMatch:
    """The request's view, resolved once: a middleware that must know the view before the handler calls it (the
    Idempotency-Key's, harness.http.idempotency) resolves it here, and the handlers below reuse the match instead of
    resolving the path again (30-50 µs of CPU on every API call: bench/cpu_per_request.py). Raises Resolver404."""
    match = request.resolver_match
    if match is None:
        match = request.resolver_match = resolve_path(getattr(request, "urlconf", None), request.path_info)
    return match


# An API path's match, by its resolver and path. An agent calls the same few paths again and again (its session's
# items, /api/v1/checkpoints/), and resolving one walks three nested resolvers' patterns and builds a ResolverMatch
# each time: about 7% of an append's CPU (bench/cpu_per_request.py --profile). A match is a description of the
# URL (the view, its kwargs, the route); nothing here or in Django changes one after it is made, and a view gets
# its kwargs as a copy. Kept on the resolver, so a new URLconf (clear_url_caches, override_settings) starts
# afresh; bounded: a path names an id, and a process that has seen this many forgets them all.
_MATCHES_ATTR = "_harness_api_matches"
_MATCHES_MAX = 4096


def resolve_path(urlconf: str | None, path: str) -> ResolverMatch:
    resolver = get_resolver(urlconf)
    if not path.startswith(API_PREFIX):
        return resolver.resolve(path)
    matches: dict[str, ResolverMatch] | None = getattr(resolver, _MATCHES_ATTR, None)
    if matches is None:
        matches = {}
        setattr(resolver, _MATCHES_ATTR, matches)
    match = matches.get(path)
    if match is None:
        match = resolver.resolve(path)  # a Resolver404 is not kept
        if len(matches) >= _MATCHES_MAX:
            matches.clear()
        matches[path] = match
    return match


class _ResolveOnce(BaseHandler):
    def resolve_request(self, request: HttpRequest) -> ResolverMatch:
        if request.resolver_match is not None and not hasattr(request, "urlconf"):
            return request.resolver_match  # resolved by a middleware (`resolved` above), for this same path
        urlconf = getattr(request, "urlconf", None)
        if hasattr(request, "urlconf"):
            set_urlconf(urlconf)  # as BaseHandler.resolve_request does
        match = request.resolver_match = resolve_path(urlconf, request.path_info)
        return match


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

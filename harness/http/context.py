"""What one request has learned so far, in one typed place both API doors read and write.

A request passes through several hands before its view answers: the Idempotency-Key middleware (which may look the
token up in its reservation, or hand the view a Claim), the plain path (harness.http.plain: the token, its throttle
count, its caller), then perhaps DRF's view (its authentication, throttle and scope). Each hand leaves here what
the next must not do again; nothing else travels on the request. `context_of(request)` makes it on first use; a
DRF Request and the Django request under it share one.

The console's per-request reads (visible projects, roles, the navigation's counts) live here too: the same rule,
computed once per request, one place to look.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.http import HttpRequest

if TYPE_CHECKING:
    from harness.models import ApiToken, Project

_ATTR = "harness_context"


@dataclass
class RequestContext:
    # The bearer token's lookup, by digest (harness.http.auth.bearer_token): `token` None with a `digest` is "looked
    # up, and no live token has it". Set by the Idempotency-Key's reservation or the first lookup; reused after.
    digest: str | None = None
    token: "ApiToken | None" = None
    # The throttle's count of this request (harness.http.throttling.counted_wait): the token counted and the wait
    # it came to (None: it fits). Counted once, whichever door counts first.
    counted_token_id: int | None = None
    wait: float | None = None
    # The Idempotency-Key claimed in the write's own statement (harness.http.idempotency.Claim), when the view
    # claims it and the request carries a key. Read through harness.http.idempotency.claim_of, which types it (that
    # module imports this one, so this one names the type without importing it).
    claim: Any = None
    # The plain path's caller (harness.http.plain.PlainCaller), for its refusal to be vouched for; read through
    # harness.http.plain.caller_of, which types it.
    caller: Any = None
    # The ids of the projects the API caller may read (harness.http.api_base.scope).
    scope_ids: list[int] | None = None
    # The console's: the projects the user sees, by slug; the roles held somewhere; the navigation's counts.
    console_projects: "list[Project] | None" = None
    console_roles: dict[str, bool] | None = None
    console_counts: Any = None

    def found(self, digest: str) -> bool:
        """Whether the token with this digest was looked up already in this request."""
        return self.digest == digest


def context_of(request: Any) -> RequestContext:
    """The request's context, made on first use. Takes a Django HttpRequest or DRF's Request around one."""
    # Read from the instance's __dict__, not with getattr: every API call asks several times, and a getattr that
    # misses (a Django request has no `_request`) costs an AttributeError raised and caught each time.
    kept = request.__dict__
    context: RequestContext | None = kept.get(_ATTR)
    if context is None:
        inner: HttpRequest | None = kept.get("_request")  # DRF's Request: the context is its Django request's
        if inner is not None:
            return context_of(inner)
        context = kept[_ATTR] = RequestContext()
    return context


__all__ = ["RequestContext", "context_of"]

"""`Idempotency-Key` for every POST under /api/v1/, whatever view serves it.

A middleware rather than a view mixin, so endpoints written by anyone (memory included) get it
without opting in. The key is scoped to the caller (the bearer token, or the console user), so two
principals never see each other's replies.
"""

import datetime as dt
import hashlib
import json
from collections.abc import Callable

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from harness.canonical import canonical_json
from harness.middleware import error_response
from harness.models import IdempotentRequest

HEADER = "HTTP_IDEMPOTENCY_KEY"
API_PREFIX = "/api/v1/"
MAX_KEY_LENGTH = 200
# How long a key is remembered; a client retries within minutes, never a day later.
RETENTION = dt.timedelta(hours=24)


def request_principal(request: HttpRequest) -> str | None:
    """Who is asking, without authenticating: DRF does that in the view; a bad token gets its 401 there."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    parts = header.split()
    if len(parts) == 2 and parts[0].lower() == "bearer":
        return "bearer:" + hashlib.sha256(parts[1].encode()).hexdigest()
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return None


def request_fingerprint(request: HttpRequest) -> str:
    """Method, path, query and body; a JSON body is canonicalised so key order does not matter."""
    body: bytes = request.body
    try:
        canonical = canonical_json(json.loads(body)) if body else ""
    except (ValueError, RecursionError):
        canonical = body.hex()
    text = "\n".join([request.method or "", request.path, request.META.get("QUERY_STRING", ""), canonical])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class IdempotencyMiddleware:
    """Replay the first successful reply to a POST retried with the same key and body.

    1. Reserve (principal, key) by inserting an in-progress row, committed before the view runs:
       a concurrent duplicate hits the unique constraint and gets 409, never a second write.
    2. A key already used with a different request is refused (422).
    3. A 2xx reply is stored and replayed for every retry; any other outcome releases the key so
       the client may retry the same request (errors are answered afresh, not replayed).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        key = request.META.get(HEADER)
        if request.method != "POST" or key is None or not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        if not key or len(key) > MAX_KEY_LENGTH:
            return error_response(
                400, "invalid_idempotency_key", f"Idempotency-Key is 1 to {MAX_KEY_LENGTH} characters."
            )
        principal = request_principal(request)
        if principal is None:
            return self.get_response(request)
        fingerprint = request_fingerprint(request)
        try:
            with transaction.atomic():
                record = IdempotentRequest.objects.create(
                    principal=principal, key=key, method="POST", path=request.path[:500], request_hash=fingerprint
                )
        except IntegrityError:
            return self._answer_repeat(principal, key, fingerprint)
        try:
            response = self.get_response(request)
        except BaseException:
            IdempotentRequest.objects.filter(pk=record.pk).delete()
            raise
        self._settle(record, response)
        return response

    def _answer_repeat(self, principal: str, key: str, fingerprint: str) -> HttpResponse:
        first = IdempotentRequest.objects.filter(principal=principal, key=key).first()
        if first is None:
            # The first request just failed and released the key: the client may simply retry.
            return error_response(409, "idempotency_in_progress", "A request with this key is in progress; retry.")
        if first.request_hash != fingerprint:
            return error_response(
                422, "idempotency_key_reused", "This Idempotency-Key was used with a different request."
            )
        if first.state == IdempotentRequest.State.IN_PROGRESS:
            return error_response(409, "idempotency_in_progress", "A request with this key is in progress; retry.")
        replay = JsonResponse(first.response_body, status=first.response_status or 200, safe=False)
        replay["Idempotent-Replayed"] = "true"
        return replay

    def _settle(self, record: IdempotentRequest, response: HttpResponse) -> None:
        body = None
        if 200 <= response.status_code < 300 and not getattr(response, "streaming", False):
            try:
                body = json.loads(response.content) if response.content else None
            except ValueError:
                body = None
            else:
                IdempotentRequest.objects.filter(pk=record.pk).update(
                    state=IdempotentRequest.State.DONE, response_status=response.status_code, response_body=body
                )
                return
        IdempotentRequest.objects.filter(pk=record.pk).delete()


STALE_IN_PROGRESS = dt.timedelta(minutes=10)


def idempotent_requests_prune(*, older_than: dt.timedelta = RETENTION) -> int:
    """Forget keys past the retention window (a periodic job calls this). Returns how many went.

    A reservation stuck in progress that long (its process died mid-request) goes too, so the key
    becomes usable again.
    """
    now = timezone.now()
    # A reservation still "in progress" after STALE_IN_PROGRESS belongs to a process that died
    # mid-request; freeing it early lets the client's retry through instead of a day of 409s.
    expired = Q(created_at__lt=now - older_than) | Q(
        state=IdempotentRequest.State.IN_PROGRESS, created_at__lt=now - STALE_IN_PROGRESS
    )
    deleted, _ = IdempotentRequest.objects.filter(expired).delete()
    return deleted

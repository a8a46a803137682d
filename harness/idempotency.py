"""`Idempotency-Key` for every POST under /api/v1/, whatever view serves it.

A middleware rather than a view mixin, so endpoints written by anyone (memory included) get it
without opting in. The key is scoped to the caller (the bearer token, or the console user), so two
principals never see each other's replies.
"""

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from django.db import DataError, connection, transaction
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from harness.auth import FOUND_TOKEN_ATTR, TOKEN_COLUMNS, TOKEN_SQL, as_first_statement, token_from_row
from harness.canonical import canonical_json
from harness.db import prepared_cursor
from harness.middleware import error_response
from harness.models import IdempotentRequest

HEADER = "HTTP_IDEMPOTENCY_KEY"
BEARER = "bearer:"
API_PREFIX = "/api/v1/"
MAX_KEY_LENGTH = 200
# How long a key is remembered; a client retries within minutes, never a day later.
RETENTION = dt.timedelta(hours=24)


def request_principal(request: HttpRequest) -> str | None:
    """Who is asking, without authenticating: DRF does that in the view; a bad token gets its 401 there."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    parts = header.split()
    if len(parts) == 2 and parts[0].lower() == "bearer":
        return BEARER + hashlib.sha256(parts[1].encode()).hexdigest()  # the token's digest (ApiToken.hash_secret)
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


# Both statements run on every keyed POST, so they are hand-written and prepared (harness.db): the
# reservation is one autocommit INSERT (no BEGIN/COMMIT round trips, no savepoint: ON CONFLICT answers a
# duplicate instead of an exception), and the settlement stores the reply's bytes as jsonb without
# decoding them in Python. S608: the table name comes from the model's metadata.
_TABLE = IdempotentRequest._meta.db_table
_RESERVE_SQL = f"""
INSERT INTO {_TABLE} (principal, key, method, path, request_hash, state, created_at)
VALUES (%s, %s, 'POST', %s, %s, 'in_progress', now())
ON CONFLICT (principal, key) DO NOTHING
RETURNING id
"""  # noqa: S608
_RESERVE_WITH_TOKEN_SQL = f"""
WITH token AS ({TOKEN_SQL}), reserved AS (
    INSERT INTO {_TABLE} (principal, key, method, path, request_hash, state, created_at)
    SELECT %s, %s, 'POST', %s, %s, 'in_progress', now() WHERE EXISTS (SELECT 1 FROM token)
    ON CONFLICT (principal, key) DO NOTHING
    RETURNING id
)
SELECT token.*, (SELECT id FROM reserved) FROM token
"""  # noqa: S608
_SETTLE_SQL = f"""
UPDATE {_TABLE} SET state = 'done', response_status = %s, response_body = %s::jsonb WHERE id = %s
"""  # noqa: S608
_RELEASE_SQL = f"DELETE FROM {_TABLE} WHERE id = %s"  # noqa: S608


class IdempotencyMiddleware:
    """Replay the first successful reply to a POST retried with the same key and body.

    1. Reserve (principal, key) by inserting an in-progress row, committed before the view runs:
       a concurrent duplicate finds the row and gets 409, never a second write.
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
        reservation = [principal, key, request.path[:500], fingerprint]
        if principal.startswith(BEARER):
            # The token is looked up in the same statement (one round trip, not two), and only a live
            # token reserves a key: a revoked one gets its 401 from the view, never a stored reply.
            digest = principal.removeprefix(BEARER)
            row = as_first_statement(lambda: _fetch(_RESERVE_WITH_TOKEN_SQL, [digest, *reservation]))
            setattr(request, FOUND_TOKEN_ATTR, (digest, None if row is None else token_from_row(row)))
            if row is None:
                return self.get_response(request)
            reserved = row[TOKEN_COLUMNS]
        else:
            row = _fetch(_RESERVE_SQL, reservation)
            reserved = None if row is None else row[0]
        if reserved is None:
            return self._answer_repeat(principal, key, fingerprint)
        record_id: int = reserved
        try:
            response = self.get_response(request)
        except BaseException:
            _release(record_id)
            raise
        self._settle(record_id, response)
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

    def _settle(self, record_id: int, response: HttpResponse) -> None:
        if not 200 <= response.status_code < 300 or getattr(response, "streaming", False):
            _release(record_id)
            return
        content = response.content
        if content and not _is_json(response):
            _release(record_id)  # not a reply this middleware can replay
            return
        try:
            # A savepoint only when the view left a transaction open (a test's): in autocommit a failed
            # statement ends by itself.
            guard = transaction.atomic() if connection.in_atomic_block else nullcontext()
            with guard, prepared_cursor() as cursor:
                cursor.execute(_SETTLE_SQL, [response.status_code, content.decode() if content else None, record_id])
        except DataError:  # the reply claimed JSON and was not: forget the key rather than replay garbage
            _release(record_id)


def _fetch(sql: str, params: list[Any]) -> tuple[Any, ...] | None:
    with prepared_cursor() as cursor:
        cursor.execute(sql, params)
        row: tuple[Any, ...] | None = cursor.fetchone()
        return row


def _is_json(response: HttpResponse) -> bool:
    return "json" in response.get("Content-Type", "")


def _release(record_id: int) -> None:
    with prepared_cursor() as cursor:
        cursor.execute(_RELEASE_SQL, [record_id])


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

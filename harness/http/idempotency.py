"""`Idempotency-Key` for every POST under /api/v1/, whatever view serves it.

A middleware rather than a view mixin, so endpoints written by anyone (memory included) get it
without opting in. The key is scoped to the caller (the bearer token, or the console user), so two
principals never see each other's replies.
"""

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import psycopg
from django.conf import settings
from django.db import (
    DEFAULT_DB_ALIAS,
    IntegrityError,
    InterfaceError,
    OperationalError,
    connection,
    connections,
    transaction,
)
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404
from django.utils import timezone

from harness.canonical import canonical_json
from harness.db import prepared_cursor
from harness.http.auth import TOKEN_COLUMNS, TOKEN_SQL, found_token, token_from_row
from harness.http.context import context_of
from harness.http.errors import NOT_FINAL_ATTR
from harness.http.handlers import resolved
from harness.http.middleware import error_response
from harness.models import IdempotentRequest
from harness.ops import faults

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
# reservation is one INSERT (ON CONFLICT answers a duplicate instead of an exception, so no savepoint), and
# the settlement stores the reply's bytes as jsonb without decoding them in Python. S608: the table name
# comes from the model's metadata.
#
# A duplicate's INSERT waits on the first request's uncommitted key for as long as that request runs,
# holding a web worker. The reservation bounds the wait in its own statement, without a round trip of its
# own: the INSERT's source row sets a transaction-local lock_timeout (HARNESS_IDEMPOTENCY_LOCK_TIMEOUT_MS)
# before the row is inserted, and the final projection, which reads the INSERT's result and so comes after
# it, sets it back to the connection's default (set_config with NULL is RESET), so the view's own statements
# wait as they always did. A wait that times out is answered 409 `idempotency_in_progress` (Retry-After).
_TABLE = IdempotentRequest._meta.db_table
_BOUNDED = "set_config('lock_timeout', %s, true) IS NOT NULL"
_UNBOUNDED = "set_config('lock_timeout', NULL, true)"
_RESERVE_SQL = f"""
WITH reserved AS (
    INSERT INTO {_TABLE} (principal, key, method, path, request_hash, state, created_at)
    SELECT %s, %s, 'POST', %s, %s, 'in_progress', now() WHERE {_BOUNDED}
    ON CONFLICT (principal, key) DO NOTHING
    RETURNING id
)
SELECT reserved.id, {_UNBOUNDED} FROM (SELECT 1) one LEFT JOIN reserved ON true
"""  # noqa: S608
_RESERVE_WITH_TOKEN_SQL = f"""
WITH token AS ({TOKEN_SQL}), reserved AS (
    INSERT INTO {_TABLE} (principal, key, method, path, request_hash, state, created_at)
    SELECT %s, %s, 'POST', %s, %s, 'in_progress', now() WHERE EXISTS (SELECT 1 FROM token) AND {_BOUNDED}
    ON CONFLICT (principal, key) DO NOTHING
    RETURNING id
)
SELECT token.*, reserved.id, {_UNBOUNDED} FROM token LEFT JOIN reserved ON true
"""  # noqa: S608
_SETTLE_SQL = f"""
UPDATE {_TABLE} SET state = 'done', response_status = %s, response_body = %s::jsonb WHERE id = %s
"""  # noqa: S608
_RELEASE_SQL = f"DELETE FROM {_TABLE} WHERE id = %s"  # noqa: S608

# A 4xx is the request's final answer and is replayed like a 2xx (the view may have written something before
# refusing: a memory write the policy rejects is audited, and its retry must not audit it twice), except
# these, which say "not now" or "not you" rather than "no": answered afresh, the key released.
_RETRY_LATER = frozenset({401, 408, 425, 429})
# A 400 says the request is not one its operation takes (a field it does not take, `unknown_field`; a value it
# refuses, `invalid` and the other validation codes; a body that does not parse): it did nothing, so it is rolled
# back with its key like a 5xx, never stored, and the corrected body may reuse the key (issue 30).
_NOT_AN_OPERATION = 400
# What jsonb refuses although JSON allows it (a NUL, a lone surrogate): such a reply is answered, not stored.
_JSONB_REFUSES = re.compile(rb"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")


class _NoToken(Exception):
    """The bearer token is unknown or revoked: nothing was reserved; the view answers 401."""


class _WaitedTooLong(Exception):
    """The reservation waited on another request's uncommitted key past the lock timeout: nothing was done."""


def _lock_timeout() -> str:
    """How long a duplicate's reservation waits on the first request's key, as lock_timeout takes it (ms)."""
    return str(settings.HARNESS_IDEMPOTENCY_LOCK_TIMEOUT_MS)


# What a client waits before it retries a duplicate whose first request is still running (seconds).
RETRY_AFTER_SECONDS = 1


def in_progress() -> HttpResponse:
    """409 `idempotency_in_progress`: retry (the harness client does, after Retry-After)."""
    response = error_response(409, "idempotency_in_progress", "A request with this key is in progress; retry.")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class IdempotencyMiddleware:
    """Replay the final reply to a POST retried with the same key and body.

    1. Open a transaction whose first statement reserves (principal, key) by inserting its row
       (fused with the token lookup for a bearer token: one round trip for both).
    2. Run the view inside that transaction (its own transactions become savepoints), then store the
       reply in the same transaction: the work and its reply commit together or not at all. A process
       killed anywhere in between (kill -9, a lost connection) rolls both back, the key included, so a
       retry runs the operation once, afresh; there is no reservation left behind to wait for.
    3. A duplicate that arrives meanwhile waits on the first one's uncommitted key (PostgreSQL's unique
       index), as a claimed write's duplicate does, then replays its reply; a key already used with a
       different request is refused (422). The wait is bounded (HARNESS_IDEMPOTENCY_LOCK_TIMEOUT_MS): past
       it the duplicate is answered 409 `idempotency_in_progress` with Retry-After, and nothing was done.
    4. 2xx and final 4xx replies are stored and replayed. A 5xx, a 400 (the body is not one the operation
       takes: `_NOT_AN_OPERATION`) and any reply given after a statement failed (the transaction is aborted, so
       nothing could commit) roll the work back with the key. A reply that is not final (`_RETRY_LATER`, or a
       refusal marked not final such as 409 project_frozen: harness.http.errors.NOT_FINAL_ATTR) or not storable (not
       JSON) commits the work and releases the key, so it is answered afresh.
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
        if _claims_in_statement(request):
            # The view records its reply under the key in the statement that makes its write (see Claim):
            # no reservation before it and no settlement after it.
            context_of(request).claim = Claim(principal, key, request.path[:500], fingerprint)
            return self.get_response(request)
        reservation = [principal, key, request.path[:500], fingerprint]
        retry_on_a_new_connection = _first_statement_of_request()
        progress: list[str] = []
        try:
            return self._in_transaction(request, principal, key, fingerprint, reservation, progress)
        except _NoToken:
            return self.get_response(request)
        except _WaitedTooLong:
            return in_progress()
        except (OperationalError, InterfaceError):
            # The persistent connection was dropped by the server between requests: the reservation, the
            # request's first statement, failed and nothing happened (what Django's health check would
            # have found, without its SELECT 1 on every request). Once more, on a new connection.
            if not retry_on_a_new_connection or progress:
                raise
            connections[DEFAULT_DB_ALIAS].close()
        try:
            return self._in_transaction(request, principal, key, fingerprint, reservation, [])
        except _NoToken:
            return self.get_response(request)
        except _WaitedTooLong:
            return in_progress()

    def _in_transaction(
        self, request: HttpRequest, principal: str, key: str, fingerprint: str, reservation: list[Any],
        progress: list[str],
    ) -> HttpResponse:
        with transaction.atomic():
            try:
                record_id = self._reserve(request, principal, reservation)
            except OperationalError as exc:
                if isinstance(exc.__cause__, psycopg.errors.LockNotAvailable):
                    raise _WaitedTooLong from None  # the transaction rolls back: nothing was reserved
                raise
            progress.append("reserved")  # from here on nothing is repeated: the view may run
            if record_id is None:
                return answer_repeat(principal, key, fingerprint)
            faults.point("idempotency.after_reserve")
            response = self.get_response(request)
            faults.point("idempotency.after_view")
            if response.status_code >= 500 or response.status_code == _NOT_AN_OPERATION or _aborted():
                transaction.set_rollback(True)  # the work goes with the key: a retry runs it afresh
            else:
                _settle(record_id, response)
                faults.point("idempotency.before_commit")
        return response

    def _reserve(self, request: HttpRequest, principal: str, reservation: list[Any]) -> int | None:
        """The reservation's id; None when the key is taken (committed by another request, or by one that
        was in flight and committed while this statement waited on it)."""
        if principal.startswith(BEARER):
            # The token is looked up in the same statement (one round trip, not two), and only a live
            # token reserves a key: a revoked one gets its 401 from the view, never a stored reply.
            digest = principal.removeprefix(BEARER)
            row = _fetch(_RESERVE_WITH_TOKEN_SQL, [digest, *reservation, _lock_timeout()])
            # Kept for the authentication (either door's: harness.http.auth.bearer_token), which looks it up no more.
            found_token(request, digest, None if row is None else token_from_row(row))
            if row is None:
                raise _NoToken
            reserved: int | None = row[TOKEN_COLUMNS]
            return reserved
        row = _fetch(_RESERVE_SQL, [*reservation, _lock_timeout()])
        return None if row is None or row[0] is None else int(row[0])


def _aborted() -> bool:
    """Whether a statement of the view failed outside a savepoint (PostgreSQL then refuses every statement until
    the rollback): its reply is answered, never stored, and nothing of the request commits."""
    raw = connections[DEFAULT_DB_ALIAS].connection
    return raw is not None and raw.info.transaction_status == psycopg.pq.TransactionStatus.INERROR


def _first_statement_of_request() -> bool:
    """Whether the reservation will be this request's first statement on a persistent connection that
    Django's health check has not checked yet (harness.http.auth.as_first_statement has the same rule); marks
    it checked, since the reservation stands in for the check."""
    db = connections[DEFAULT_DB_ALIAS]
    if db.connection is None or getattr(db, "health_check_done", True) or db.in_atomic_block:
        return False
    db.health_check_done = True  # type: ignore[attr-defined]  # django-stubs lack it
    return True


def _settle(record_id: int, response: HttpResponse) -> None:
    """Store the reply under the key, in the request's transaction; or release the key when the reply is
    not one to replay."""
    content = response.content if not getattr(response, "streaming", False) else None
    storable = (
        content is not None
        and (200 <= response.status_code < 300
             or (400 <= response.status_code < 500 and response.status_code not in _RETRY_LATER))
        and (not content or (_is_json(response) and _JSONB_REFUSES.search(content) is None))
        and not getattr(response, NOT_FINAL_ATTR, False)
    )
    if storable:
        try:
            text = content.decode() if content else None
        except UnicodeDecodeError:
            storable = False
    with prepared_cursor() as cursor:
        if storable:
            cursor.execute(_SETTLE_SQL, [response.status_code, text, record_id])
        else:
            cursor.execute(_RELEASE_SQL, [record_id])


def answer_repeat(principal: str, key: str, fingerprint: str) -> HttpResponse:
    """The answer to a request whose key is taken: the stored reply, or 422 when the key came with another
    request. (409 only for what no longer holds the reply: a key released or pruned meanwhile, or a
    reservation committed in progress by a version before the one-transaction reservation.)"""
    first = IdempotentRequest.objects.filter(principal=principal, key=key).first()
    if first is None:
        # The first request's reply was not one to store, and it released the key: the client may retry.
        return in_progress()
    if first.request_hash != fingerprint:
        return error_response(422, "idempotency_key_reused", "This Idempotency-Key was used with a different request.")
    if first.state == IdempotentRequest.State.IN_PROGRESS:
        return in_progress()
    replay = JsonResponse(first.response_body, status=first.response_status or 200, safe=False)
    replay["Idempotent-Replayed"] = "true"
    return replay


# --- the key claimed in the write's own statement -------------------------------------------------
# The middleware's reservation and settlement are two statements around the view's, in the view's
# transaction. A view on a hot path can do with fewer: with `claims_idempotency_key`
# set on its class, the middleware reserves nothing and hands it a Claim, and the view's service inserts
# the key's record, already done and holding the reply, in the statement that makes the write. The two
# commit together or not at all; a duplicate hits the unique (principal, key) and the whole statement,
# write included, rolls back (`KeyTaken`), and the view answers with `answer_repeat` as the middleware
# would. Round trips for a keyed append: two (the token, the write) instead of three.

_UNIQUE = "idempotent_request_unique"


@dataclass(frozen=True)
class Claim:
    principal: str
    key: str
    path: str
    fingerprint: str

    def answer_repeat(self) -> HttpResponse:
        return answer_repeat(self.principal, self.key, self.fingerprint)

    def taken(self) -> bool:
        """Whether the key is recorded already. A claimed write that was refused asks before it explains
        the refusal: a retry of a write that was done (an append whose expected_last_seq has moved on because
        of that very write) must get the first reply, not the refusal."""
        return IdempotentRequest.objects.filter(principal=self.principal, key=self.key).exists()


class KeyTaken(Exception):
    """The claimed key is another request's (done, in progress, or with another body): nothing was written.
    The view answers with `exc.claim.answer_repeat()`."""

    def __init__(self, claim: Claim) -> None:
        super().__init__(claim.key)
        self.claim = claim


def claim_of(request: HttpRequest) -> Claim | None:
    """The view's Claim when the request carries an Idempotency-Key, else None (the request's context holds it)."""
    claim: Claim | None = context_of(request).claim
    return claim


def _claims_in_statement(request: HttpRequest) -> bool:
    try:
        match = resolved(request)
    except Resolver404:
        return False
    view_class = getattr(match.func, "view_class", None)
    return bool(getattr(view_class, "claims_idempotency_key", False))


def claim_sql(reply_sql: str, *, status: int = 201) -> str:
    """A data-modifying CTE member (`INSERT ... SELECT`) recording the reply under the claimed key; the write's
    statement names it `claim AS (...)`. `reply_sql` is a jsonb expression over the statement's other CTEs,
    NULL when the write was refused (then nothing is recorded: errors are answered afresh, never replayed).
    Takes the parameters of `claim_params`."""
    return f"""
    INSERT INTO {_TABLE} (principal, key, method, path, request_hash, state, response_status, response_body,
                          created_at)
    SELECT %(claim_principal)s::text, %(claim_key)s::text, 'POST', %(claim_path)s::text, %(claim_hash)s::text, 'done',
           {int(status)},
           reply.body, now()
      FROM (SELECT ({reply_sql}) AS body) reply
     WHERE %(claim_principal)s::text IS NOT NULL AND reply.body IS NOT NULL"""  # noqa: S608


def claim_params(claim: Claim | None) -> dict[str, str | None]:
    if claim is None:
        return {"claim_principal": None, "claim_key": None, "claim_path": None, "claim_hash": None}
    return {"claim_principal": claim.principal, "claim_key": claim.key, "claim_path": claim.path,
            "claim_hash": claim.fingerprint}


def execute_claimed(cursor: Any, sql: str, params: dict[str, Any], claim: Claim | None) -> None:
    """Execute a statement holding a `claim_sql` member; KeyTaken if the key was someone else's. In a
    transaction the caller left open (a test's), a savepoint keeps the failure from poisoning it."""
    try:
        # Only a claim's failure is answered (KeyTaken); without one the error propagates, and a savepoint
        # would only cost the statement two round trips (the resume's checkpoint write).
        with _may_fail() if claim is not None else nullcontext():
            cursor.execute(sql, params)
    except IntegrityError as exc:
        if claim is not None and getattr(getattr(exc.__cause__, "diag", None), "constraint_name", None) == _UNIQUE:
            raise KeyTaken(claim) from None
        raise


def _may_fail() -> AbstractContextManager[object]:
    """Around a statement that may fail and be answered: a savepoint only when a transaction is open (a
    test's), so the failure does not poison it; in autocommit a failed statement ends by itself."""
    return transaction.atomic() if connection.in_atomic_block else nullcontext()


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

    A reservation stuck in progress that long goes too, so the key becomes usable again.
    """
    now = timezone.now()
    # The reservation commits only with its reply now, so no row stays "in progress"; one committed so by
    # an earlier version (its process died mid-request) is freed here instead of after a day of 409s.
    expired = Q(created_at__lt=now - older_than) | Q(
        state=IdempotentRequest.State.IN_PROGRESS, created_at__lt=now - STALE_IN_PROGRESS
    )
    deleted, _ = IdempotentRequest.objects.filter(expired).delete()
    return deleted

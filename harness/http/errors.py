"""Domain errors, and the one mapping from them to HTTP.

Services raise these; every door (API, console, admin, worker) catches the same types. The API
renders each as {"code", "detail", ...extra} with a stable machine-readable code.
"""

from typing import Any, NamedTuple

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db import DatabaseError, IntegrityError, InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

# Set on a response whose refusal depends on a state a person will change (a frozen project): the Idempotency-Key
# middleware does not store it, so the same key retried after the change is answered afresh (harness.http.idempotency).
NOT_FINAL_ATTR = "harness_not_final"


class DomainError(Exception):
    code = "domain_error"
    http_status = 400
    # A 4xx is the final answer to its request and is replayed under its Idempotency-Key, unless this is False.
    final = True

    def __init__(self, detail: str, *, code: str | None = None, final: bool | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        if code is not None:
            self.code = code
        if final is not None:
            self.final = final
        self.extra = extra

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "detail": self.detail, **self.extra}


class ConflictError(DomainError):
    """An illegal transition, a stale version, a lost lease or a taken key.

    Carries the record's current status and version so a client can decide what to do next.
    """

    code = "conflict"
    http_status = 409

    def __init__(
        self,
        detail: str,
        *,
        code: str = "conflict",
        current_status: str | None = None,
        current_version: int | None = None,
        final: bool | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail, code=code, final=final, **extra)
        self.current_status = current_status
        self.current_version = current_version
        if current_status is not None:
            self.extra["current_status"] = current_status
        if current_version is not None:
            self.extra["current_version"] = current_version


class NotFoundError(DomainError, Http404):
    """Absent, or not in the caller's projects: a 404 at every door (the API renders it in the error
    shape, a console page as the 404 page), so the API and the console share their selectors."""

    code = "not_found"
    http_status = 404


class ValidationFailed(DomainError):
    code = "invalid"
    http_status = 400


class Forbidden(DomainError):
    code = "forbidden"
    http_status = 403


_DRF_CODES = {
    drf_exceptions.NotAuthenticated: "not_authenticated",
    drf_exceptions.AuthenticationFailed: "authentication_failed",
    drf_exceptions.PermissionDenied: "permission_denied",
    drf_exceptions.NotFound: "not_found",
    drf_exceptions.MethodNotAllowed: "method_not_allowed",
    drf_exceptions.ParseError: "parse_error",
    drf_exceptions.UnsupportedMediaType: "unsupported_media_type",
    drf_exceptions.Throttled: "throttled",
    drf_exceptions.NotAcceptable: "not_acceptable",
    drf_exceptions.ValidationError: "invalid",
}


class ErrorReply(NamedTuple):
    status: int
    body: dict[str, Any]
    headers: dict[str, str]
    final: bool  # False: not the request's final answer (NOT_FINAL_ATTR)


def error_reply(exc: Exception) -> ErrorReply | None:
    """The API's answer to a domain error or a database failure, in the one error shape; None for anything else.
    Both API doors use it: DRF's exception handler below and the plain path (harness.http.plain)."""
    if isinstance(exc, DomainError):
        return ErrorReply(exc.http_status, exc.as_dict(), {}, exc.final)
    refusal = imported_refusal_of(exc)
    if refusal is not None:
        # A trigger refused a write to a row imported from another instance (bundles_app: read-only).
        return ErrorReply(refusal.http_status, refusal.as_dict(), {}, True)
    if _is_unique_violation(exc):
        # A client-chosen unique value (a ref) taken by a racing or earlier request: theirs to change.
        return ErrorReply(409, {"code": "already_exists", "detail": "A record with this reference already exists."},
                          {}, True)
    if _database_unreachable(exc):
        # The database went away (a restart, a failover; experiment 25): the client may retry, a write with the same
        # Idempotency-Key. Django closes the broken connection after this response and the next request connects
        # afresh. Without this the caller got Django's HTML 500 page.
        body = {"code": "database_unavailable", "detail": "The database is unavailable; retry shortly."}
        return ErrorReply(503, body, {"Retry-After": "1"}, True)
    return None


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Render every 4xx in one shape: {"code": ..., "detail": ..., ...}; a database out of reach is a 503 in it."""
    reply = error_reply(exc)
    if reply is not None:
        if reply.status == 503 or reply.body.get("code") == IMPORTED_CODE:
            set_rollback()
        refusal = Response(reply.body, status=reply.status, headers=reply.headers or None)
        if not reply.final:
            setattr(refusal, NOT_FINAL_ATTR, True)
        return refusal
    if isinstance(exc, Http404):
        exc = drf_exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = drf_exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "error")
    if isinstance(exc, drf_exceptions.ValidationError):
        response.data = {"code": code, "detail": "The request is invalid.", "fields": response.data}
    else:
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else response.data
        response.data = {"code": code, "detail": str(detail)}
    # 401 for a missing/bad token, never a silent 403 the client cannot tell apart.
    return response


# The SQLSTATE bundles_app's triggers raise on a write to an imported session, run or task (harness.imports).
IMPORTED_STATE = "HX409"
IMPORTED_CODE = "imported_read_only"


def imported_refusal_of(exc: BaseException) -> ConflictError | None:
    """409 `imported_read_only` when `exc` is a trigger's refusal of a write to an imported row, else None."""
    cause = exc.__cause__
    if not isinstance(exc, DatabaseError) or getattr(cause, "sqlstate", None) != IMPORTED_STATE:
        return None
    primary = getattr(getattr(cause, "diag", None), "message_primary", None) or str(cause)
    return ConflictError(f"{primary} (fork it to work on it).", code=IMPORTED_CODE)


# SQLSTATE class 08 (connection exception) and the server shutting down or starting up (57P01-57P03).
_UNREACHABLE_STATES = ("08", "57P01", "57P02", "57P03")


def _database_unreachable(exc: Exception) -> bool:
    """A lost or refused connection, not an error of the statement (a deadlock or a timeout is the request's)."""
    if not isinstance(exc, (OperationalError, InterfaceError)):
        return False
    state = getattr(exc.__cause__, "sqlstate", None)
    return state is None or state.startswith(_UNREACHABLE_STATES)


def _is_unique_violation(exc: Exception) -> bool:
    if not isinstance(exc, IntegrityError):
        return False
    cause = exc.__cause__
    return getattr(cause, "sqlstate", None) == "23505" or "UNIQUE constraint failed" in str(exc)

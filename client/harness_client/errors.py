"""The API's `{"code", "detail", ...}` error shape as exception classes.

Every error the client raises is a `HarnessError`. An HTTP answer maps by status:

=====================  ==========================================================
401                    AuthenticationError
403                    PermissionDenied
404                    NotFoundError
409                    ConflictError (current_status, current_version)
400, 422               ValidationError (422: a policy refusal or a reused key)
5xx                    ServerError (after the client's retries)
anything else          HarnessError
=====================  ==========================================================

No answer at all (connection refused, reply lost, timeout) after the retries is a `TransportError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "ApprovalWaitTimeout",
    "AuthenticationError",
    "ConflictError",
    "HarnessError",
    "NotFoundError",
    "PermissionDenied",
    "PushUnavailable",
    "ServerError",
    "TransportError",
    "ValidationError",
    "error_from_response",
]


class HarnessError(Exception):
    """An error from the Harness Console API (or from reaching it).

    `status` is the HTTP status (None when no answer came back), `code` the API's stable,
    machine-readable code, `detail` its human-readable text, `body` the whole decoded error body.
    """

    def __init__(
        self, detail: str, *, status: int | None = None, code: str = "error", body: Any = None,
        method: str = "", url: str = "",
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.code = code
        self.body = body
        self.method = method
        self.url = url

    def __str__(self) -> str:
        where = f" ({self.method} {self.url})" if self.method else ""
        status = f"{self.status} " if self.status is not None else ""
        return f"{status}{self.code}: {self.detail}{where}"


class AuthenticationError(HarnessError):
    """401: no token, or a token that is unknown or revoked."""


class PermissionDenied(HarnessError):
    """403: the token's role may not do this (a reader token writing, an agent deciding an approval)."""


class NotFoundError(HarnessError):
    """404: absent, or not in the token's project."""


class ValidationError(HarnessError):
    """400 (invalid input; `fields` names each bad field; `unknown_field`: `unknown_fields` names each field the
    operation does not take) or 422 (a memory write the policy rejected, or an Idempotency-Key reused with a
    different request)."""

    @property
    def fields(self) -> dict[str, Any]:
        fields = self.body.get("fields") if isinstance(self.body, Mapping) else None
        return dict(fields) if isinstance(fields, Mapping) else {}

    @property
    def unknown_fields(self) -> list[str]:
        """With code `unknown_field`: the path of each field the body named that the operation does not take
        (`parent_checkpoint`, `items[0].seq`); nothing was written."""
        named = self.body.get("unknown_fields") if isinstance(self.body, Mapping) else None
        return [str(path) for path in named] if isinstance(named, list) else []


class ConflictError(HarnessError):
    """409: an illegal transition, a stale `expected_version`, a lost lease, a taken reference.

    `current_status` and `current_version` say where the record is now, so the caller can reload and
    decide (they are None when the conflict is not about a versioned record).
    """

    @property
    def current_status(self) -> str | None:
        value = self.body.get("current_status") if isinstance(self.body, Mapping) else None
        return value if isinstance(value, str) else None

    @property
    def current_version(self) -> int | None:
        value = self.body.get("current_version") if isinstance(self.body, Mapping) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def existing_id(self) -> int | None:
        """With code `already_exists` (a session, task or run `ref` the project has already): the id of the
        record that holds it."""
        value = self.body.get("id") if isinstance(self.body, Mapping) and self.code == "already_exists" else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None


class ServerError(HarnessError):
    """5xx, still failing after the client's retries."""


class TransportError(HarnessError):
    """No HTTP answer (connection refused or reset, reply lost, timeout), still after the retries.

    The underlying httpx exception is the `__cause__`. A POST may or may not have been applied; retrying it
    with the same `request_key` is safe (the server replays the first reply).
    """


class PushUnavailable(HarnessError):
    """The client has no push to wait on (`push_url=""`), or it did not answer: the wait polls instead."""


class ApprovalWaitTimeout(HarnessError, TimeoutError):
    """`wait_for_approval` ran out of time with the approval still pending; `approval` is the last seen."""

    def __init__(self, detail: str, *, approval: Any) -> None:
        super().__init__(detail, code="wait_timeout")
        self.approval = approval


class QuestionWaitTimeout(HarnessError, TimeoutError):
    """`wait_for_question` ran out of time with the question still pending; `question` is the last seen."""

    def __init__(self, detail: str, *, question: Any) -> None:
        super().__init__(detail, code="wait_timeout")
        self.question = question


def error_from_response(status: int, body: Any, text: str = "", *, method: str = "", url: str = "") -> HarnessError:
    """The exception for an HTTP error answer: `body` is the decoded JSON (or None), `text` the raw body."""
    if isinstance(body, Mapping) and isinstance(body.get("code"), str):
        code: str = body["code"]
        detail = str(body.get("detail", ""))
    else:
        code = f"http_{status}"
        detail = text.strip()[:500] or f"HTTP {status}"
    cls: type[HarnessError]
    if status == 401:
        cls = AuthenticationError
    elif status == 403:
        cls = PermissionDenied
    elif status == 404:
        cls = NotFoundError
    elif status == 409:
        cls = ConflictError
    elif status in (400, 422):
        cls = ValidationError
    elif status >= 500:
        cls = ServerError
    else:
        cls = HarnessError
    return cls(detail, status=status, code=code, body=body, method=method, url=url)

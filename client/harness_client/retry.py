"""When the client tries a request again, and how long it waits first (shared by both clients).

A POST carries an Idempotency-Key made once per call and sent again on every retry, so the server applies
it at most once and replays its first reply (`Idempotent-Replayed: true`). GETs are safe to repeat. A PATCH
(`save_task`) has no key on the server's side: it is retried only when the request surely never reached
the server; otherwise its compare-and-set on `expected_version` would turn a lost reply into a 409. A PUT
(`set_retention`) sends the whole new state, so repeating it is safe.
"""

from __future__ import annotations

import dataclasses
import random

import httpx

__all__ = ["IN_FLIGHT_CODE", "RetryPolicy"]

# harness/http/idempotency.py: a duplicate of a POST whose first copy the server is still working on.
IN_FLIGHT_CODE = "idempotency_in_progress"

# Failures where the request surely did not reach the server.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff: attempt n waits about `base_delay * 2**(n-1)`, never more than `max_delay`.

    `max_attempts` counts the first try (1 turns retries off). Retried: connection errors and timeouts,
    409 `idempotency_in_progress`, 429 and 5xx, after the answer's Retry-After when it names a longer wait
    (up to `max_delay`). Never retried: any other 4xx.
    """

    max_attempts: int = 4
    base_delay: float = 0.2
    max_delay: float = 5.0
    jitter: float = 0.25  # up to this fraction of each delay is random, so clients that failed together spread

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts counts the first try: at least 1")
        if self.base_delay < 0 or self.max_delay < 0 or not 0 <= self.jitter <= 1:
            raise ValueError("delays are >= 0 and jitter is between 0 and 1")

    def backoff(self, attempt: int) -> float:
        """The wait after failed attempt number `attempt` (1-based)."""
        delay = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        spread: float = self.jitter * random.random()  # noqa: S311 - spreading retries, not a secret
        return delay * (1 - spread)

    def after_exception(self, attempt: int, exc: Exception, *, replayable: bool) -> float | None:
        """Seconds to wait before another try after a transport failure, or None to give up."""
        if attempt >= self.max_attempts or not isinstance(exc, httpx.TransportError):
            return None
        if not replayable and not isinstance(exc, _NOT_SENT):
            return None
        return self.backoff(attempt)

    def after_response(self, attempt: int, response: httpx.Response, code: str | None, *, replayable: bool
                       ) -> float | None:
        """Seconds to wait before another try after an error answer, or None to give up (and raise)."""
        if attempt >= self.max_attempts:
            return None
        status = response.status_code
        # A duplicate whose first copy is still running is told when to come back (the server bounds its
        # wait on the first one and answers Retry-After): retried like a 429, whatever the method.
        in_flight = status == 409 and code == IN_FLIGHT_CODE
        if not in_flight and (status not in _RETRIED_STATUSES or not replayable):
            return None
        delay = self.backoff(attempt)
        retry_after = response.headers.get("Retry-After", "")
        if retry_after.isdigit():
            delay = max(delay, min(float(retry_after), self.max_delay))
        return delay

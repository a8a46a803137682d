"""Rate limits on the cache: per API token (DRF's throttle hook) and per console login.

Fixed windows counted with INCRBY in Redis (a pipeline with its EXPIRE: one round trip, no database), so
every web process counts against the same limit; a process takes a token's requests in leases (below). DRF's
own SimpleRateThrottle keeps a list of every request's time in the cache and reads and writes it whole: two
round trips and a list as long as the limit.
A cache that cannot be reached lets the request through (logged): the limit protects the service, and the
database, not the cache, is what must stay correct.
"""

import functools
import hashlib
import logging
import re
import time
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from harness.http.context import context_of
from harness.models import ApiToken

if TYPE_CHECKING:  # DRF imports this module while rest_framework.views is still loading
    from rest_framework.views import APIView

log = logging.getLogger(__name__)

_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([a-z]+)\s*$")


@functools.cache
def parse_rate(rate: str) -> tuple[int, int] | None:
    """"6000/min" -> (6000, 60), "10/15min" -> (10, 900); "off" -> None. Anything else stops the process."""
    if rate.strip().lower() in ("", "off", "none"):
        return None
    match = _RATE.match(rate.lower())
    if match is None or match.group(3) not in _UNITS or int(match.group(1)) < 1:
        raise ImproperlyConfigured(f"{rate!r} is not a rate: N/s, N/min, N/hour, N/day (e.g. 6000/min, 10/15min).")
    return int(match.group(1)), int(match.group(2) or 1) * _UNITS[match.group(3)]


_clients: dict[str, Any] = {}


def _redis() -> Any:
    """One Redis client per process for the counters, or None when the cache is not Redis. Not the cache's own
    client: Django's RedisCache builds a new redis.Redis object on every call (about 0.2 ms of CPU, more than
    the round trip), which every API request would pay."""
    config = settings.CACHES["default"]
    if not config["BACKEND"].endswith("RedisCache"):
        return None
    location = config["LOCATION"]
    client = _clients.get(location)
    if client is None:
        import redis

        client = _clients[location] = redis.Redis.from_url(location, socket_connect_timeout=2, socket_timeout=2)
    return client


def _hit(key: str, window: int, amount: int = 1) -> int | None:
    """Add `amount` to `key` (created with a TTL of the window); the new count, or None if the cache failed."""
    try:
        client = _redis()
        if client is not None:
            pipe = client.pipeline(transaction=False)
            pipe.incrby(key, amount)
            pipe.expire(key, window + 1)
            count, _ = pipe.execute()
            return int(count)
        cache.add(key, 0, window + 1)
        return int(cache.incr(key, amount))
    except Exception:  # any cache failure: let the request through, and say so
        log.warning("rate-limit cache unreachable; request let through", exc_info=True)
        return None


def _count(key: str) -> int:
    client = _redis()
    return int((client.get(key) if client is not None else cache.get(key)) or 0)


def _window(window: int) -> tuple[int, float]:
    """The current window's number and the seconds left in it."""
    now = time.time()
    return int(now // window), window - (now % window)


# Each process takes a token's requests from Redis in leases of 1% of its limit (at least 1): one round trip
# per lease instead of one per request (a round trip costs about 0.1 ms of a request's ~0.9 ms of CPU,
# bench/cpu_per_request.py). The price: a lease a process does not use up by the window's end is still counted,
# so with P processes a token may be refused up to (P - 1)% of its limit early; never admitted past it. A limit
# under 100 a window is counted request by request, exactly.
LEASE_FRACTION = 100
_leases: dict[str, int] = {}
_lease_window: list[int] = [0]


def _take(key: str, limit: int, window: int, number: int) -> bool:
    """Whether one more request of `key` fits in the window: from this process's lease, or a new lease."""
    if number != _lease_window[0]:  # a new window: the old leases are void
        _leases.clear()
        _lease_window[0] = number
    left = _leases.get(key, 0)
    if left > 0:
        _leases[key] = left - 1
        return True
    chunk = max(1, limit // LEASE_FRACTION)
    count = _hit(key, window, chunk)
    if count is None:
        return True  # the cache failed: let it through (logged)
    before = count - chunk
    if before >= limit:
        return False
    _leases[key] = min(chunk, limit - before) - 1
    return True


def token_wait(token: ApiToken) -> float | None:
    """Count one request of the token against HARNESS_API_RATE: None when it fits, else the seconds until the
    window ends (the 429's Retry-After)."""
    rate = parse_rate(settings.HARNESS_API_RATE)
    if rate is None:
        return None
    limit, window = rate
    number, left = _window(window)
    # The prefix beside the id: a database made anew (a test run's) hands out the same ids again, and the
    # counters in Redis outlive it.
    if _take(f"harness:throttle:token:{token.pk}:{token.prefix}:{window}:{number}", limit, window, number):
        return None
    return left


def counted_wait(request: HttpRequest | Request, token: ApiToken) -> float | None:
    """The request counted once against the token's limit, whichever door asks first (the plain path's
    plain_caller, DRF's TokenRateThrottle): `token_wait`'s answer, kept in the request's context
    (harness.http.context) so that a request the plain path hands to DRF's view is not counted twice."""
    context = context_of(request)
    if context.counted_token_id != token.pk:
        context.counted_token_id, context.wait = token.pk, token_wait(token)
    return context.wait


class TokenRateThrottle(BaseThrottle):
    """HARNESS_API_RATE per API token (agent or personal). A console session calling the API is not counted
    here: its user logged in through the login's own limit."""

    def __init__(self) -> None:
        self._wait: float | None = None

    def allow_request(self, request: Request, view: "APIView") -> bool:
        token = request.auth
        if not isinstance(token, ApiToken):
            return True
        self._wait = counted_wait(request, token)
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


# --- console logins ---------------------------------------------------------------------------------------

def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or the header the proxy sets (HARNESS_CLIENT_IP_HEADER, e.g.
    X-Real-IP) when there is one; behind a proxy without it, every client shares the proxy's address and the
    login limit becomes per username."""
    header = getattr(settings, "HARNESS_CLIENT_IP_HEADER", "")
    forwarded = request.META.get(header, "") if header else ""
    return forwarded.split(",")[0].strip() or request.META.get("REMOTE_ADDR", "")


def _login_key(request: HttpRequest, username: str, number: int) -> str:
    # Hashed: a username is the caller's text (any length, any character) and is kept out of the key's name.
    who = hashlib.sha256(f"{client_address(request)}\n{username.strip().lower()}".encode()).hexdigest()[:32]
    return f"harness:throttle:login:{who}:{number}"


def login_retry_after(request: HttpRequest, username: str) -> int | None:
    """Seconds until this address may try this username again, or None when it may now."""
    rate = parse_rate(settings.HARNESS_LOGIN_RATE)
    if rate is None:
        return None
    limit, window = rate
    number, left = _window(window)
    try:
        failures = _count(_login_key(request, username, number))
    except Exception:
        log.warning("rate-limit cache unreachable; login let through", exc_info=True)
        return None
    return max(1, int(left + 0.999)) if failures >= limit else None


def login_failed(request: HttpRequest, username: str) -> None:
    rate = parse_rate(settings.HARNESS_LOGIN_RATE)
    if rate is not None:
        number, _ = _window(rate[1])
        _hit(_login_key(request, username, number), rate[1])

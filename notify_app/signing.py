"""The signature on an outbound webhook, and how a receiver checks it.

    X-Harness-Timestamp: <unix seconds>
    X-Harness-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>." + body)>

The timestamp is inside the signed bytes, so a receiver that refuses a timestamp older than its tolerance
(5 minutes by default) refuses a replayed delivery whose signature is otherwise valid; the delivery id
(`X-Harness-Delivery`) names a delivery across its retries, for receivers that must act once.
"""

import hashlib
import hmac
import secrets
import time

TIMESTAMP_HEADER = "X-Harness-Timestamp"
SIGNATURE_HEADER = "X-Harness-Signature"
EVENT_HEADER = "X-Harness-Event"
DELIVERY_HEADER = "X-Harness-Delivery"
DEFAULT_TOLERANCE_SECONDS = 300


def new_secret() -> str:
    return secrets.token_hex(32)


def sign(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def verify(secret: str, body: bytes, timestamp: str, signature: str, *,
           tolerance: int = DEFAULT_TOLERANCE_SECONDS, now: float | None = None) -> bool:
    """True when `signature` is this body's under `secret` and `timestamp` is within `tolerance` of now."""
    if not timestamp.isdigit() or len(timestamp) > 12:
        return False
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance:
        return False
    return hmac.compare_digest(sign(secret, int(timestamp), body), signature)

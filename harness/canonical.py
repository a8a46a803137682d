"""Canonical JSON and the hashes built on it.

jsonb reorders keys, so a hash is always taken over this canonical text, never the stored text.
"""

import datetime as dt
import decimal
import hashlib
import json
import uuid
from typing import Any


def _default(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_default)


def digest(value: Any) -> str:
    """SHA-256 hex of the canonical JSON of `value`."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def action_fingerprint(tool: str, arguments: Any) -> str:
    """The identity of a pending action: what a reviewer approves and the worker must execute."""
    return digest({"tool": tool, "arguments": arguments})

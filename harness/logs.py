"""Structured logs: one JSON object per line, carrying the ids of what is being worked on, secrets scrubbed.

The ids live in a context variable bound by whoever knows them: the request's middleware (request id, and the
run, approval, session... named by the URL: harness.observe), the token's authentication (project), and a
Celery task's start (task id and name, and the ids of the request that queued it, carried in the message's
headers by `harness_context`: harness.celery). A line logged anywhere below picks them up.

No line may carry a token, a password or memory content (tests/harness/test_logs.py drives a login, token
calls and a memory write and reads every line): nothing here logs a body or a header, and the formatter
scrubs anything shaped like a bearer token, an `hc_` secret or a `password=` pair, in case a message or a
traceback quotes one.
"""

import contextvars
import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonEncoder
from pythonjsonlogger.json import JsonFormatter as _BaseJsonFormatter

# The keys a line may carry, in the order they print; anything else is not context.
CONTEXT_KEYS = ("request_id", "project", "session", "run", "approval", "effect", "task", "celery_task_id",
                "celery_task")
_context: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("harness_log_context", default=None)


def bind(**values: Any) -> None:
    """Add ids to the current context (a request's, a task's); None values are skipped."""
    current = _context.get() or {}
    _context.set({**current, **{k: v for k, v in values.items() if v is not None}})


def current() -> dict[str, Any]:
    return dict(_context.get() or {})


@contextmanager
def scope(**values: Any) -> Iterator[None]:
    """A context for the length of a block (a request, a task): what it binds is gone after it."""
    token = _context.set({k: v for k, v in values.items() if v is not None})
    try:
        yield
    finally:
        _context.reset(token)


def enter(**values: Any) -> contextvars.Token[dict[str, Any] | None]:
    """`scope` for code that starts and ends in two callbacks (Celery's task_prerun and task_postrun)."""
    return _context.set({k: v for k, v in values.items() if v is not None})


def leave(token: contextvars.Token[dict[str, Any] | None]) -> None:
    _context.reset(token)


class ContextFilter(logging.Filter):
    """Puts the bound ids on every record (as attributes: the JSON formatter prints each as a key)."""

    def filter(self, record: logging.LogRecord) -> bool:
        values = _context.get()
        if values:
            for key, value in values.items():
                setattr(record, key, value)
        record.context = " ".join(f"{k}={v}" for k, v in (values or {}).items())
        return True


_SECRETS = [
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]+"), r"\1 [redacted]"),
    (re.compile(r"\bhc_[A-Za-z0-9_-]{8,}"), "hc_[redacted]"),
    (re.compile(r"(?i)(password|passwd|secret|token)(\\?[\"']?\s*[=:]\s*\\?[\"']?)[^\s\"'&,}\\]+"), r"\1\2[redacted]"),
    (re.compile(r"(?i)(://[^:/@\s]+:)[^@/\s]+@"), r"\1[redacted]@"),  # a URL's password
]


# Every pattern above needs one of these (lower-cased) to match at all. Most lines (the access line of every
# request among them) carry none, and looking for them costs a tenth of running the four patterns.
_SECRET_MARKERS = ("bearer", "hc_", "passw", "secret", "token", "://")


def scrub(text: str) -> str:
    lowered = text.lower()
    if not any(marker in lowered for marker in _SECRET_MARKERS):
        return text
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


class JsonFormatter(_BaseJsonFormatter):
    """python-json-logger's formatter: time, level, logger, message, the context's ids, any `extra=`, and the
    traceback as `exc_info`; the whole line scrubbed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("fmt", "%(levelname)s %(name)s %(message)s")
        kwargs.setdefault("rename_fields", {"levelname": "level", "name": "logger"})
        kwargs.setdefault("timestamp", "time")  # ISO 8601, UTC
        # `context` is the text formatter's summary of the ids; a JSON line has each id as a key instead.
        kwargs.setdefault("reserved_attrs", [*RESERVED_ATTRS, "context"])
        super().__init__(*args, **kwargs)
        # What json.dumps(log_data, cls=JsonEncoder, ensure_ascii=...) builds on every line, built once: every
        # request writes an access line (bench/cpu_per_request.py), and the encoder holds no state between lines.
        self._encoder = JsonEncoder(default=self.json_default, indent=self.json_indent,
                                    ensure_ascii=self.json_ensure_ascii)

    def jsonify_log_record(self, log_data: dict[str, Any]) -> str:
        if self.json_encoder is not JsonEncoder or self.json_serializer is not json.dumps:
            return super().jsonify_log_record(log_data)
        return self._encoder.encode(log_data)

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))


class TextFormatter(logging.Formatter):
    """For a terminal (LOG_FORMAT=text): one line, the context's ids at its end, scrubbed all the same."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s %(context)s")

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "context"):
            record.context = ""
        return scrub(super().format(record))

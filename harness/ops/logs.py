"""Structured logs: one JSON object per line, carrying the ids of what is being worked on, secrets scrubbed.

The ids live in a context variable bound by whoever knows them: the request's middleware (request id, and the
run, approval, session... named by the URL: harness.ops.observe), the token's authentication (project), and a
Celery task's start (task id and name, and the ids of the request that queued it, carried in the message's
headers by `harness_context`: harness.ops.task_observe). A line logged anywhere below picks them up.

No line may carry a token, a password or memory content (tests/harness/test_logs.py drives a login, token
calls and a memory write and reads every line): nothing here logs a body or a header, and the formatter
scrubs anything shaped like a bearer token, an `hc_` secret or a `password=` pair, in case a message or a
traceback quotes one.
"""

import ast
import contextvars
import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
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



# --- periodic tasks are quiet unless they did something ---------------------------------------------------------
# Beat sends a webhook sweep every 2 s, a heartbeat every few seconds and a recovery pass every minute; Celery
# logs "Sending due task", "received" and "succeeded" for each at INFO, which buried everything else a worker said
# (bin/start: over half of all lines were the sweep's). These lines of a periodic task (one in
# CELERY_BEAT_SCHEDULE) are DEBUG unless the task's result says it did something: a count above zero, or a
# non-empty list, anywhere in what it returned. A failure is never touched (Celery logs it at ERROR, elsewhere).
CELERY_TASK_LOGGERS = ("celery.beat", "celery.worker.strategy", "celery.app.trace")


def did_something(value: Any) -> bool:
    """Whether a task's result reports work done: an int above zero, or a non-empty list/tuple/set, anywhere in
    it (dict values included). Floats are measurements (a heartbeat's lag), not counts; None and text are nothing."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value > 0
    if isinstance(value, dict):
        return any(did_something(item) for item in value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return len(value) > 0
    return False


class QuietPeriodicTasks(logging.Filter):
    """On Celery's own loggers (CELERY_TASK_LOGGERS): a periodic task's routine lines become DEBUG lines."""

    def __init__(self, name: str = "") -> None:
        super().__init__(name)
        self._periodic: frozenset[str] | None = None

    def periodic(self) -> frozenset[str]:
        if self._periodic is None:  # read on first use: the filter is built while settings are still loading
            from django.conf import settings

            schedule = getattr(settings, "CELERY_BEAT_SCHEDULE", {}) or {}
            self._periodic = frozenset(entry["task"] for entry in schedule.values())
        return self._periodic

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or not self._routine(record):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)

    def _routine(self, record: logging.LogRecord) -> bool:
        args = record.args
        if record.name == "celery.beat":  # "Scheduler: Sending due task %s (%s)", (entry name, task name)
            return isinstance(args, tuple) and len(args) == 2 and args[1] in self.periodic()
        if not isinstance(args, dict) or args.get("name") not in self.periodic():
            return False
        if "return_value" not in args:  # "received"
            return True
        try:  # "succeeded": Celery gives the result as its repr
            result = ast.literal_eval(str(args["return_value"]))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return False  # a result this cannot read is logged as it was
        return not did_something(result)

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

        # The line python-json-logger builds for a plain record, built here without its generic steps (defaults,
        # static fields, renames looked up per key, the time as an object for the encoder's fallback): every
        # request writes an access line. Only for the configuration above; tests/ops/test_logs.py holds the two
        # ways to the same bytes.
        self._plain = (self._required_fields == ["levelname", "name", "message"] and not self.defaults
                       and not self.static_fields and not self.prefix and self.timestamp == "time"
                       and self.rename_fields == {"levelname": "level", "name": "logger"}
                       and not self.rename_fields_keep_missing and type(self).process_log_record
                       is _BaseJsonFormatter.process_log_record)

    def jsonify_log_record(self, log_data: dict[str, Any]) -> str:
        if self.json_encoder is not JsonEncoder or self.json_serializer is not json.dumps:
            return super().jsonify_log_record(log_data)
        return self._encoder.encode(log_data)

    def format(self, record: logging.LogRecord) -> str:
        if not self._plain or type(record.msg) is dict or record.exc_info or record.exc_text or record.stack_info:
            return scrub(super().format(record))
        record.message = record.getMessage()
        data: dict[str, Any] = {"level": record.levelname, "logger": record.name, "message": record.message}
        skip = self._skip_fields
        for key, value in record.__dict__.items():
            if key not in skip and not (isinstance(key, str) and key.startswith("_")):
                data[key] = value
        return self.plain_line(data, datetime.fromtimestamp(record.created, tz=UTC))

    def plain_line(self, data: dict[str, Any], created: datetime) -> str:
        """A plain record's line from its fields in order (level, logger, message, extras, context): the time
        last, as python-json-logger puts it, and scrubbed. `format` and `info_line` both end here."""
        data["time"] = created.isoformat()
        return scrub(self.jsonify_log_record(data))

    def format_as_library(self, record: logging.LogRecord) -> str:
        """The line python-json-logger's own steps build (for the test that holds `format` to it)."""
        return scrub(super().format(record))


class TextFormatter(logging.Formatter):
    """For a terminal (LOG_FORMAT=text): one line, the context's ids at its end, scrubbed all the same."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s %(context)s")

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "context"):
            record.context = ""
        return scrub(super().format(record))


def info_line(logger: logging.Logger, message: str, extra: dict[str, Any]) -> None:
    """`logger.info(message, extra=extra)`, writing the very line it would, without the logging module's general
    machinery when the configuration is this module's (one StreamHandler with JsonFormatter and ContextFilter, no
    other handler or filter on the way): the access line of every request (harness.ops.observe). In a request, among
    a millisecond of other code, the general way cost 110-135 µs of CPU, a sixth of an agent's newest-items read
    (bench/cpu_per_request.py); most of it is the record and the library's generic steps, not the write.
    Any other configuration (a test's caplog, a second handler, a filter, text lines) takes logger.info itself;
    tests/ops/test_logs.py holds the two to the same line, byte for byte."""
    if not logger.isEnabledFor(logging.INFO):
        return
    handler = _only_plain_handler(logger)
    if handler is None:
        logger.info(message, extra=extra)
        return
    formatter: JsonFormatter = handler.formatter  # type: ignore[assignment]  # _only_plain_handler checked it
    data: dict[str, Any] = {"level": "INFO", "logger": logger.name, "message": message, **extra}
    context = _context.get()
    if context:
        data.update(context)
    line = formatter.plain_line(data, datetime.now(UTC))
    with handler.lock:  # type: ignore[union-attr]  # a StreamHandler always has its lock
        try:
            handler.stream.write(line + handler.terminator)
            handler.flush()
        except Exception:  # noqa: BLE001 - as StreamHandler.emit: a failed write is reported, not raised
            handler.handleError(logger.makeRecord(logger.name, logging.INFO, "", 0, message, (), None))


def _only_plain_handler(logger: logging.Logger) -> logging.StreamHandler[Any] | None:
    """The one handler a record of `logger` would reach, when it is a plain StreamHandler writing JsonFormatter's
    plain lines through ContextFilter alone, with no filter or other handler on the way; else None."""
    found: logging.StreamHandler[Any] | None = None
    current: logging.Logger | None = logger
    while current is not None:
        if current.filters:
            return None
        for handler in current.handlers:
            if (found is not None or type(handler) is not logging.StreamHandler or handler.level > logging.INFO
                    or not isinstance(handler.formatter, JsonFormatter) or not handler.formatter._plain
                    or len(handler.filters) != 1 or type(handler.filters[0]) is not ContextFilter):
                return None
            found = handler
        current = current.parent if current.propagate else None
    return found


"""Structured logs (harness.ops.logs): one JSON object per line with the ids in effect, and no token, password or
memory content in any line, whatever the level."""

import datetime
import io
import json
import logging
import re
from collections.abc import Iterator

import pytest
from django.test import Client

from harness.ops import logs
from harness.ops.logs import scrub
from harness.ops.task_observe import CONTEXT_HEADER, SENT_AT_HEADER, _carry_context
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    """Every record of every logger, at DEBUG, through the production formatter and filter."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonFormatter())
    handler.addFilter(logs.ContextFilter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def _parsed(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_request_logs_one_json_line_with_its_request_id_project_and_the_ids_in_its_url(
        lines: io.StringIO, project) -> None:  # type: ignore[no-untyped-def]
    _, secret = factories.make_agent_token(project)
    session = factories.make_session(project)
    response = Client().get(f"/api/v1/sessions/{session.pk}/", HTTP_AUTHORIZATION=f"Bearer {secret}",
                            HTTP_X_REQUEST_ID="req-abc.1")
    assert response.status_code == 200 and response["X-Request-ID"] == "req-abc.1"
    access = [line for line in _parsed(lines) if line["logger"] == "harness.request"]
    assert len(access) == 1
    line = access[0]
    assert (line["request_id"], line["project"], line["session"], line["status"], line["level"]) == (
        "req-abc.1", project.slug, session.pk, 200, "INFO")
    assert line["message"] == "GET api/v1/sessions/<id:pk>/ 200" and line["duration_ms"] >= 0
    assert "time" in line and "context" not in line
    assert logs.current() == {}  # nothing leaks into the next request


def test_a_request_id_that_is_not_plain_is_replaced(lines: io.StringIO) -> None:
    response = Client().get("/login/", HTTP_X_REQUEST_ID='x" injected=1 \n')
    assert response["X-Request-ID"] != 'x" injected=1 \n' and len(response["X-Request-ID"]) == 32


def test_a_task_sent_from_a_request_carries_its_ids_in_the_messages_headers() -> None:
    headers: dict = {}
    with logs.scope(request_id="r-1", project="acme", approval=7):
        _carry_context(headers=headers)
    assert headers[CONTEXT_HEADER] == {"request_id": "r-1", "project": "acme", "approval": 7}
    assert isinstance(headers[SENT_AT_HEADER], float)


def test_secrets_quoted_in_a_message_or_a_traceback_are_scrubbed(lines: io.StringIO) -> None:
    log = logging.getLogger("tests.ops")
    log.warning("calling with Authorization: Bearer hc_abcdefghijkl and password=hunter2 to "
                "postgres://app:s3cret@db:5432/harness")
    try:
        raise ValueError("token=hc_zyxwvutsrqpo")
    except ValueError:
        log.exception("failed")
    text = lines.getvalue()
    for secret in ("hc_abcdefghijkl", "hunter2", "s3cret", "hc_zyxwvutsrqpo"):
        assert secret not in text
    first, second = _parsed(lines)
    assert first["message"] == ("calling with Authorization: Bearer [redacted] and password=[redacted] to "
                                "postgres://app:[redacted]@db:5432/harness")
    assert "ValueError" in second["exc_info"]


def test_no_line_carries_a_token_a_password_or_memory_content(lines: io.StringIO, project) -> None:  # type: ignore[no-untyped-def]
    password = "a-long-console-password-9431"
    user = factories.make_user("opal", role="operator", projects=[project], password=password)
    _, agent_secret = factories.make_agent_token(project)
    _, personal_secret = factories.make_personal_token(user)
    run = factories.make_run(project, active_agent="writer")
    memory_text = "the reviewer's daughter is called Mirabel"

    browser = Client()
    assert browser.post("/login/", {"username": "opal", "password": "wrong-" + password}).status_code == 200
    assert browser.post("/login/", {"username": "opal", "password": password}).status_code == 302
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {agent_secret}")
    written = agent.post("/api/v1/memory/records/", {"scope": "project", "content": memory_text,
                                                     "source_run_id": run.pk}, content_type="application/json",
                         HTTP_IDEMPOTENCY_KEY="mem-1")
    assert written.status_code == 201, written.content
    assert agent.get("/api/v1/memory/retrieve/?scope=project&q=Mirabel").status_code == 200
    assert Client().get("/api/v1/sessions/", HTTP_AUTHORIZATION="Bearer hc_not_a_real_token_at_all").status_code == 401
    assert Client(HTTP_AUTHORIZATION=f"Bearer {personal_secret}").get("/api/v1/approvals/").status_code == 200

    text = lines.getvalue()
    assert len(_parsed(lines)) >= 6  # the requests were logged
    for secret in (password, agent_secret, personal_secret, "hc_not_a_real_token_at_all", memory_text, "Mirabel"):
        assert secret not in text


@pytest.mark.parametrize(("line", "secret"), [
    ("BEARER abc.def", "abc.def"),
    ("sent hc_abcdefghijkl alone", "hc_abcdefghijkl"),
    ("PASSWD: hunter2", "hunter2"),
    ("Secret=swordfish", "swordfish"),
    ('{"token": "t0psecretvalue"}', "t0psecretvalue"),
    ("redis://user:pa55@cache:6379/0", "pa55"),
])
def test_each_secret_shape_alone_is_scrubbed_however_it_is_cased(line: str, secret: str) -> None:
    # scrub skips the patterns for a line with none of their markers; each shape alone must still be caught.
    assert secret not in scrub(line)


def test_a_line_without_any_secret_marker_comes_back_unchanged() -> None:
    line = '{"level": "INFO", "logger": "harness.access", "message": "POST api/v1/runs/<int:pk>/ 201"}'
    assert scrub(line) is line


def test_the_formatters_short_way_writes_the_librarys_line_byte_for_byte() -> None:
    import datetime as dt
    import sys

    formatter = logs.JsonFormatter()
    assert formatter._plain  # the settings' formatter takes the short way
    context = logs.ContextFilter()
    for msg, args, extra in [
        ("%s %s %s", ("POST", "api/v1/checkpoints/", 201), {"status": 201, "duration_ms": 1.25}),
        ("plain", (), {}),
        ("é ünïcode \u2028 and \"quotes\"", (), {"when": dt.datetime(2026, 12, 2, tzinfo=dt.UTC), "n": None}),
        ("calling Bearer hc_abcdefghijkl", (), {"_private": 1, "items": [1, {"a": b"x"}]}),
    ]:
        record = logging.LogRecord("harness.request", logging.INFO, __file__, 1, msg, args, None)
        record.__dict__.update(extra)
        with logs.scope(request_id="r-9", project="acme", run=3):
            context.filter(record)
        assert formatter.format(record) == formatter.format_as_library(record)
    try:
        raise ValueError("boom")
    except ValueError:
        failed = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    assert "ValueError: boom" in json.loads(formatter.format(failed))["exc_info"]  # the library's way, as before


def _logger_tree(*handlers: logging.Handler) -> logging.Logger:
    """`harness.request` under a root of its own holding `handlers`, as settings.LOGGING builds it."""
    root = logging.RootLogger(logging.INFO)
    for handler in handlers:
        root.addHandler(handler)
    logger = logging.Logger("harness.request")
    logger.parent = root
    return logger


def _production_handler(stream: io.StringIO) -> logging.Handler:
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonFormatter())
    handler.addFilter(logs.ContextFilter())
    return handler


_TIME = re.compile(r'"time": "[^"]+"')


def test_the_access_line_is_the_line_logger_info_writes() -> None:
    short, general = io.StringIO(), io.StringIO()
    with logs.scope(request_id="req-1", session=4):
        logs.bind(project="acme")
        logs.info_line(_logger_tree(_production_handler(short)), "POST api/v1/sessions/<id:pk>/items/ 201",
                       {"status": 201, "duration_ms": 1.5})
        _logger_tree(_production_handler(general)).info("POST api/v1/sessions/<id:pk>/items/ 201",
                                                        extra={"status": 201, "duration_ms": 1.5})
    assert short.getvalue().endswith("\n") and short.getvalue().count("\n") == 1
    assert _TIME.sub("T", short.getvalue()) == _TIME.sub("T", general.getvalue())
    line = json.loads(short.getvalue())
    assert list(line) == ["level", "logger", "message", "status", "duration_ms", "request_id", "session", "project",
                          "time"]
    assert datetime.datetime.fromisoformat(line["time"]).utcoffset() == datetime.timedelta(0)


def test_any_other_logging_configuration_gets_logger_info_itself() -> None:
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    stream = io.StringIO()
    for extra_handler in (Keep(), _production_handler(io.StringIO())):  # caplog's kind; a second stream
        logger = _logger_tree(_production_handler(stream), extra_handler)
        logs.info_line(logger, "GET x 200", {"status": 200})
    assert [record.getMessage() for record in seen] == ["GET x 200"] and stream.getvalue().count("\n") == 2
    quiet = _logger_tree(_production_handler(stream))
    quiet.setLevel(logging.WARNING)
    logs.info_line(quiet, "GET x 200", {"status": 200})
    text = io.StringIO()
    plain_text = logging.StreamHandler(text)
    plain_text.setFormatter(logs.TextFormatter())
    plain_text.addFilter(logs.ContextFilter())
    logs.info_line(_logger_tree(plain_text), "GET y 200", {"status": 200})
    assert stream.getvalue().count("\n") == 2 and " INFO harness.request GET y 200" in text.getvalue()

"""The agent API's shorter middleware chain (harness.http.handlers), driven through the WSGI application itself."""

import io
import json
from typing import Any
from wsgiref.util import setup_testing_defaults

import pytest
from django.conf import settings

from config.wsgi import application
from tests import factories


def _call(method: str, path: str, *, body: Any = None, **headers: str) -> tuple[int, dict[str, str], bytes]:
    raw = b"" if body is None else json.dumps(body).encode()
    environ: dict[str, Any] = {"REQUEST_METHOD": method, "PATH_INFO": path, "wsgi.input": io.BytesIO(raw),
                               "CONTENT_LENGTH": str(len(raw)), "CONTENT_TYPE": "application/json",
                               "HTTP_HOST": "testserver", **headers}
    setup_testing_defaults(environ)
    answer: dict[str, Any] = {}

    def start_response(status: str, response_headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        answer["status"], answer["headers"] = int(status.split()[0]), dict(response_headers)

    content = b"".join(application(environ, start_response))
    return answer["status"], answer["headers"], content


def test_the_api_chain_is_the_full_chain_without_the_browsers_parts() -> None:
    positions = [settings.MIDDLEWARE.index(name) for name in settings.API_MIDDLEWARE]
    assert positions == sorted(positions)  # an ordered subsequence: nothing reordered, nothing new
    assert "harness.http.idempotency.IdempotencyMiddleware" in settings.API_MIDDLEWARE
    assert "harness.http.middleware.RequestLimitsMiddleware" in settings.API_MIDDLEWARE


# transaction=True: the handler runs Django's request signals, whose close_old_connections would close the
# connection under a test's open transaction (the test Client disconnects it; this calls the handler as a server does).
@pytest.mark.django_db(transaction=True)
def test_an_agents_call_takes_the_api_chain_and_keeps_its_guarantees() -> None:
    project = factories.make_project("lane")
    _, token = factories.make_agent_token(project)
    session = factories.make_session(project)
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    path = f"/api/v1/sessions/{session.pk}/items/"
    body = {"items": [{"role": "user", "content": {"text": "hi"}}]}

    status, headers, first = _call("POST", path, body=body, HTTP_IDEMPOTENCY_KEY="lane-1", **auth)
    assert status == 201, first
    assert "X-Frame-Options" not in headers and "Vary" not in headers  # no browser middleware ran
    assert headers["X-Content-Type-Options"] == "nosniff"  # SecurityMiddleware did
    status, headers, again = _call("POST", path, body=body, HTTP_IDEMPOTENCY_KEY="lane-1", **auth)
    assert (status, headers.get("Idempotent-Replayed"), json.loads(again)) == (201, "true", json.loads(first))
    nested: Any = []
    for _ in range(settings.HARNESS_MAX_JSON_DEPTH + 1):
        nested = [nested]
    status, _, deep = _call("POST", path, body={"items": nested}, **auth)
    assert (status, json.loads(deep)["code"]) == (400, "json_too_deep")  # RequestLimitsMiddleware did
    status, _, unknown = _call("GET", f"/api/v1/sessions/{session.pk}/", HTTP_AUTHORIZATION="Bearer hc_nope")
    assert (status, json.loads(unknown)["code"]) == (401, "authentication_failed")


@pytest.mark.django_db(transaction=True)
def test_pages_and_cookie_calls_keep_the_full_chain() -> None:
    status, headers, _ = _call("GET", "/login/")
    assert status == 200 and headers["X-Frame-Options"] == "DENY" and "csrftoken" in headers.get("Set-Cookie", "")
    status, headers, _ = _call("GET", "/api/v1/sessions/")  # no token: a console user's cookie would be read
    assert status in (401, 403) and "Cookie" in headers.get("Vary", "")


@pytest.mark.django_db(transaction=True)
def test_a_keyed_post_resolves_its_url_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The Idempotency-Key's middleware must know the view before the handler calls it; the handler reuses its match,
    # and a later call of the same API path reuses it again (harness.http.handlers.resolve_path).
    from django.urls import clear_url_caches, get_resolver

    clear_url_caches()  # a resolver that has seen none of these paths

    project = factories.make_project("once")
    _, token = factories.make_agent_token(project)
    session = factories.make_session(project)
    root = get_resolver()
    resolve, resolved = root.resolve, []
    monkeypatch.setattr(root, "resolve", lambda path: resolved.append(path) or resolve(path))
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    for path, body in [(f"/api/v1/sessions/{session.pk}/items/", {"items": [{"role": "user", "content": {}}]}),
                       ("/api/v1/sessions/", {})]:
        resolved.clear()
        status, _, answer = _call("POST", path, body=body, HTTP_IDEMPOTENCY_KEY=f"once-{path}", **auth)
        assert (status, resolved) == (201, [path]), answer
    resolved.clear()
    status, _, answer = _call("POST", path, body={}, HTTP_IDEMPOTENCY_KEY="once-again", **auth)
    assert (status, resolved) == (201, []), answer
    status, _, _ = _call("POST", "/api/v1/no-such-thing/", body={}, HTTP_IDEMPOTENCY_KEY="once-404", **auth)
    assert status == 404 and resolved == ["/api/v1/no-such-thing/"] * 2  # a miss is resolved again, to raise its 404

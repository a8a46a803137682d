"""The client against a live server: pytest-django's live_server (a real HTTP server in a thread), on the
suite's PostgreSQL. Each test gets an agent token of a fresh project and a reviewer with a personal token."""

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import pytest
from harness_client import HarnessClient, RetryPolicy

from harness.models import Project
from tests import factories

T = TypeVar("T")

# Retries that do not slow a failing test down.
FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


@dataclass
class Live:
    url: str
    project: Project
    agent_token: str
    reviewer_token: str

    def client(self, token: str | None = None, **kwargs: Any) -> HarnessClient:
        kwargs.setdefault("retry", FAST_RETRY)
        return HarnessClient(self.url, token or self.agent_token, **kwargs)


@pytest.fixture
def live(live_server: Any, transactional_db: Any, settings: Any) -> Live:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    project = factories.make_project("clientco")
    _, agent_token = factories.make_agent_token(project, name="client-agent")
    reviewer = factories.make_user("client-reviewer", role="reviewer", projects=[project])
    _, reviewer_token = factories.make_personal_token(reviewer)
    return Live(url=live_server.url, project=project, agent_token=agent_token, reviewer_token=reviewer_token)


@pytest.fixture
def hc(live: Live) -> Iterator[HarnessClient]:
    with live.client() as client:
        yield client


class Recorder(httpx.BaseTransport):
    """Forwards to the real transport and keeps every request and answer; `lose` loses the reply of the
    first request it matches *after* the server has answered it (committed), as a dropped connection would."""

    def __init__(self, lose: Callable[[httpx.Request], bool] | None = None) -> None:
        self.inner = httpx.HTTPTransport()
        self.lose = lose
        self.lost = False
        self.exchanges: list[tuple[httpx.Request, httpx.Response | None]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        response.read()
        if self.lose is not None and not self.lost and self.lose(request):
            self.lost = True
            self.exchanges.append((request, None))
            response.close()
            raise httpx.ReadError("connection dropped before the reply arrived", request=request)
        self.exchanges.append((request, response))
        return response

    def close(self) -> None:
        self.inner.close()


class AsyncRecorder(httpx.AsyncBaseTransport):
    """Recorder for AsyncHarnessClient."""

    def __init__(self, lose: Callable[[httpx.Request], bool] | None = None) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.lose = lose
        self.lost = False
        self.exchanges: list[tuple[httpx.Request, httpx.Response | None]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        await response.aread()
        if self.lose is not None and not self.lost and self.lose(request):
            self.lost = True
            self.exchanges.append((request, None))
            await response.aclose()
            raise httpx.ReadError("connection dropped before the reply arrived", request=request)
        self.exchanges.append((request, response))
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def posts_to(path_end: str) -> Callable[[httpx.Request], bool]:
    return lambda request: request.method == "POST" and request.url.path.endswith(path_end)


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion on a fresh event loop in its own thread.

    `asyncio.run` refuses to start inside a thread whose loop is running, and pytest-playwright's
    sync API leaves one running in the main thread once a browser test has run in the same session.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()

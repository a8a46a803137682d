"""The push's routes, served by the ASGI process beside /mcp (harness.mcp.server.mcp_app mounts them):

- `GET /api/v1/approvals/{id}/wait/?until=decided|resumed&timeout=S`: answers when the approval is decided (and,
  `resumed`, when its run left `waiting_approval` for it), or after `timeout` seconds (default 25, at most 60):
  `{"done": bool, "approval": {...}, "run": {...} | null}`.
- `GET /api/v1/runs/{id}/wait/?status=S&timeout=S`: answers when the run's status is not `status` any more (the
  one the agent last saw), or after `timeout`: `{"done": bool, "run": {...}}`.
- `GET /push/v1/desk/`: a console page's event stream (text/event-stream) of its user's projects' changes,
  authenticated by the console's session cookie; the page then redraws through its own poll (static/js/push.js).

Every read is the REST read (`GET /api/v1/approvals/{id}/`, `GET /api/v1/runs/{id}/`) run through the WSGI
handler with the waiter's own Authorization (harness.mcp.dispatch.request): the token's lookup, tenancy (another
project's approval is 404), throttling, metrics and the access log are the API's own. A wait waits on one event
loop, not on a worker thread: only its reads take a thread, for a few milliseconds each.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import anyio.to_thread
from django.conf import settings
from django.db import close_old_connections
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from harness.mcp import dispatch
from harness.mcp.threads import limiter  # the process's one bound on threads and connections
from harness.push.hub import UNLISTENED_RECHECK, PushHub, Waiter

DEFAULT_TIMEOUT = 25.0  # under a proxy's usual 60 s read timeout, with room
MAX_TIMEOUT = 60.0
UNTIL = ("decided", "resumed")
KEEPALIVE = 15.0  # a comment line on an idle stream, so proxies keep it open


class WaitRefused(Exception):
    def __init__(self, field: str, detail: str) -> None:
        super().__init__(detail)
        self.field, self.detail = field, detail


def _refused(refused: WaitRefused) -> JSONResponse:
    return JSONResponse({"code": "wait_invalid", "field": refused.field, "detail": refused.detail}, status_code=400)


def _timeout(request: Request) -> float:
    raw = request.query_params.get("timeout")
    if raw is None:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        raise WaitRefused("timeout", "timeout is a number of seconds.") from None
    if not 0 <= value <= MAX_TIMEOUT:
        raise WaitRefused("timeout", f"timeout is between 0 and {MAX_TIMEOUT:g} seconds.")
    return value


async def _read(caller: dispatch.Caller, path: str) -> dispatch.Reply:
    return await anyio.to_thread.run_sync(
        lambda: dispatch.request("GET", path, "", b"", None, caller, prefix="push"), limiter=limiter())


def _passed_on(reply: dispatch.Reply) -> JSONResponse:
    """A REST read's refusal (401, 404, 429...) answered as the REST API answered it."""
    return JSONResponse(reply.body, status_code=reply.status, headers={"X-Request-ID": reply.request_id})


async def _sleep_until_woken(hub: PushHub, waiter: Waiter, deadline: float) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return
    if not hub.listening:  # no LISTEN now (the database restarting): read again on our own clock meanwhile
        remaining = min(remaining, UNLISTENED_RECHECK)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(waiter.event.wait(), remaining)


async def approval_wait(request: Request) -> Response:
    hub: PushHub = request.app.state.push_hub
    approval_id = int(request.path_params["id"])
    try:
        timeout = _timeout(request)
        until = request.query_params.get("until", "decided")
        if until not in UNTIL:
            raise WaitRefused("until", "until is decided or resumed.")
    except WaitRefused as refused:
        return _refused(refused)
    caller = dispatch.Caller.of(request)
    deadline = time.monotonic() + timeout
    await hub.start()
    with hub.watch(("approval", approval_id)) as waiter:
        while True:
            waiter.event.clear()  # before the read: a change after it sets the event again
            reply = await _read(caller, f"/api/v1/approvals/{approval_id}/")
            if reply.status != 200:
                return _passed_on(reply)
            approval, run = reply.body, None
            done = approval.get("status") != "pending"
            if done and until == "resumed":
                hub.add(waiter, ("run", approval["run"]))
                run_reply = await _read(caller, f"/api/v1/runs/{approval['run']}/")
                if run_reply.status != 200:
                    return _passed_on(run_reply)
                run = run_reply.body
                done = run.get("status") != "waiting_approval" or run.get("pending_approval") != approval_id
            if done or time.monotonic() >= deadline:
                return JSONResponse({"done": done, "approval": approval, "run": run},
                                    headers={"X-Request-ID": reply.request_id})
            await _sleep_until_woken(hub, waiter, deadline)


async def run_wait(request: Request) -> Response:
    hub: PushHub = request.app.state.push_hub
    run_id = int(request.path_params["id"])
    try:
        timeout = _timeout(request)
        seen = request.query_params.get("status")
        if not seen:
            raise WaitRefused("status", "status is the run's status you last saw; the wait ends when it changes.")
    except WaitRefused as refused:
        return _refused(refused)
    caller = dispatch.Caller.of(request)
    deadline = time.monotonic() + timeout
    await hub.start()
    with hub.watch(("run", run_id)) as waiter:
        while True:
            waiter.event.clear()
            reply = await _read(caller, f"/api/v1/runs/{run_id}/")
            if reply.status != 200:
                return _passed_on(reply)
            done = reply.body.get("status") != seen
            if done or time.monotonic() >= deadline:
                return JSONResponse({"done": done, "run": reply.body}, headers={"X-Request-ID": reply.request_id})
            await _sleep_until_woken(hub, waiter, deadline)


# --- the desk's stream --------------------------------------------------------------------------------------


def _desk_projects(session_key: str) -> frozenset[int] | None:
    """The projects the console session's user may see, or None for no (or a lapsed) session: Django's own
    session and user checks (get_user verifies the session's auth hash, so a changed password ends it)."""
    from importlib import import_module

    from django.contrib.auth import get_user

    from harness.tenancy import projects_for_user

    close_old_connections()
    try:
        store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
        user = get_user(SimpleNamespace(session=store))  # type: ignore[arg-type]
        if not user.is_authenticated:
            return None
        return frozenset(projects_for_user(user).values_list("pk", flat=True))
    finally:
        close_old_connections()


def _cors(request: Request, allowed: frozenset[str]) -> dict[str, str]:
    """The console may live on another port (bin/start: PORT, this process PORT + 1): same site, another origin.
    Only the console's own origin may read the stream with its cookies."""
    origin = request.headers.get("origin", "")
    if origin and origin.rstrip("/") in allowed:
        return {"Access-Control-Allow-Origin": origin, "Access-Control-Allow-Credentials": "true", "Vary": "Origin"}
    return {"Vary": "Origin"}


def desk_stream(allowed_origins: frozenset[str]) -> Any:
    async def stream(request: Request) -> Response:

        hub: PushHub = request.app.state.push_hub
        headers = _cors(request, allowed_origins)
        session_key = request.cookies.get(settings.SESSION_COOKIE_NAME, "")
        projects = await anyio.to_thread.run_sync(_desk_projects, session_key, limiter=limiter()) \
            if session_key else None
        if projects is None:
            return JSONResponse({"code": "not_authenticated", "detail": "Sign in to the console first."},
                                status_code=401, headers=headers)
        await hub.start()

        async def events() -> AsyncIterator[bytes]:
            with hub.stream(projects) as subscription:
                yield b"retry: 2000\nevent: ready\ndata: {}\n\n"
                while True:
                    try:
                        change = await asyncio.wait_for(subscription.queue.get(), KEEPALIVE)
                    except TimeoutError:
                        yield b": keepalive\n\n"
                        continue
                    if change is None:
                        yield b"event: resync\ndata: {}\n\n"
                        continue
                    data = json.dumps({"kind": change.kind, "id": change.id, "status": change.status})
                    yield f"event: change\ndata: {data}\n\n".encode()

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={**headers, "Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    return stream


def push_routes(allowed_origins: frozenset[str]) -> list[Route]:
    return [
        Route("/api/v1/approvals/{id:int}/wait/", approval_wait, methods=["GET"]),
        Route("/api/v1/runs/{id:int}/wait/", run_wait, methods=["GET"]),
        Route("/push/v1/desk/", desk_stream(allowed_origins), methods=["GET"]),
    ]

"""`HarnessClient` (sync) and `AsyncHarnessClient` (async): the operations of `harness_client.operations`
executed over httpx.

Each operation is declared once, in `operations`; the `_Operations` mixin turns every one into a method
of both clients (a descriptor that binds the operation to the client's own executor), with the operation's
signature and docstring. The two clients differ only in their transport loops below: send, retry with
backoff, map errors, follow pages, drive multi-request steps.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from types import TracebackType
from typing import Any, Generic, ParamSpec, Self, TypeVar, cast, overload

import httpx

from harness_client import operations as ops
from harness_client.errors import HarnessError, PushUnavailable, TransportError, error_from_response
from harness_client.models import NarrowedToken
from harness_client.protocol import Call, Paged, Sleep, Steps
from harness_client.retry import RetryPolicy

__all__ = ["AsyncHarnessClient", "HarnessClient"]

VERSION = "0.1.0"
P = ParamSpec("P")
T = TypeVar("T")

log = logging.getLogger("harness_client")


# --- what both clients share: configuration, and judging one answer ---------------------------------------


def push_root(push_url: str | None, base_url: str) -> str | None:
    """Where the waits are (the ASGI process's /api/v1/.../wait/ routes): `push_url`, else HARNESS_PUSH_URL, else
    the API's own origin (behind a proxy that routes the waits to that process); "" turns the push off (None)."""
    url = push_url if push_url is not None else os.environ.get("HARNESS_PUSH_URL")
    if url is None:
        return base_url
    return api_root(url) if url.strip() else None


def api_root(url: str) -> str:
    """`http://host:8000`, `http://host:8000/` or `http://host:8000/api/v1` -> `http://host:8000/api/v1/`."""
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"HARNESS_URL must be an http(s) URL, not {url!r}")
    if not url.endswith("/api/v1"):
        url += "/api/v1"
    return url + "/"


class _Retry:
    def __init__(self, delay: float) -> None:
        self.delay = delay


def _decode(response: httpx.Response) -> Any:
    # The standard library's json, not orjson (which decodes a 1.7 MB answer in half the time): orjson reads an
    # integer past 64 bits as a float, and a LangGraph channel may hold one (jsonb keeps it exactly).
    try:
        return response.json()
    except ValueError:
        return None


NARROWED_SECONDS = 900  # how long a `for_user` client's token lives (the server's default; at most 3600)
_RENEW_AT = 0.8  # of its life: a `for_user` client mints its next token then, before the old one expires


class _Narrowing:
    """What a client made by `for_user` mints its token with, and the token it holds (renewed at 80% of its life,
    by this process's clock, and at once after a 401)."""

    def __init__(self, parent: Any, end_user: str, session: int | None, agent: str | None, expires_in: int) -> None:
        if not end_user:
            raise ValueError("for_user needs the end user's id")
        if not 1 <= expires_in <= 3600:
            raise ValueError("expires_in is between 1 and 3600 seconds")
        self.parent, self.end_user, self.session, self.agent, self.expires_in = (
            parent, end_user, session, agent, expires_in)
        self.secret: str | None = None
        self.renew_at = 0.0
        self.lock = threading.Lock()
        self.async_lock: asyncio.Lock | None = None

    def due(self) -> bool:
        return self.secret is None or time.monotonic() >= self.renew_at

    def call(self) -> Call[NarrowedToken]:
        return ops.narrow_token(self.end_user, session=self.session, agent=self.agent, expires_in=self.expires_in)

    def take(self, started: float, minted: NarrowedToken) -> str:
        self.secret = minted.token
        self.renew_at = started + self.expires_in * _RENEW_AT
        return minted.token


class _Base:
    """Configuration and the transport-independent half of executing a call."""

    _narrowing: _Narrowing | None = None
    _owns_http = True

    def __init__(
        self, base_url: str | None = None, token: str | None = None, *, retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None, push_url: str | None = None,
    ) -> None:
        url = base_url or os.environ.get("HARNESS_URL")
        if not url:
            raise ValueError("No server: pass base_url= or set HARNESS_URL (e.g. http://127.0.0.1:8000).")
        token = token or os.environ.get("HARNESS_TOKEN")
        if not token:
            raise ValueError("No token: pass token= or set HARNESS_TOKEN (manage.py create_agent_token prints one).")
        self.base_url = api_root(url)
        self.push_root = push_root(push_url, self.base_url)
        self.retry = retry or RetryPolicy()
        self._headers = {
            "Authorization": f"Bearer {token}", "Accept": "application/json",
            "User-Agent": f"harness-console-client/{VERSION}", **(headers or {}),
        }

    def __repr__(self) -> str:
        if self._narrowing is not None:
            return f"{type(self).__name__}({self.base_url!r}, for_user={self._narrowing.end_user!r})"
        return f"{type(self).__name__}({self.base_url!r})"

    def _narrowed(self, parent: _Base, narrowing: _Narrowing) -> None:
        """Become a client bound to one end user: the parent's server, retries and connection pool (closing the
        parent closes it), with the narrowed token `narrowing` holds sent on every request."""
        if parent._narrowing is not None:
            raise ValueError("a client made by for_user cannot make another (a narrowed token cannot mint)")
        self.base_url, self.retry, self._headers = parent.base_url, parent.retry, parent._headers
        self.push_root = parent.push_root
        self._narrowing, self._owns_http = narrowing, False

    def _push_target(self, call: Call[Any]) -> tuple[str, dict[str, Any]]:
        """A call's URL and its extra httpx arguments: a push wait goes to the push root, with its own timeout."""
        if not call.push:
            return call.path, {}
        if self.push_root is None:
            raise PushUnavailable("This client has no push (push_url=\"\"): the wait polls.", code="push_unavailable")
        return self.push_root + call.path, {"timeout": call.timeout} if call.timeout is not None else {}

    def _push_lost(self, call: Call[Any], exc: httpx.TransportError) -> PushUnavailable:
        log.info("push wait %s failed (%s: %s); polling instead", call.path, type(exc).__name__, exc)
        return PushUnavailable(f"The push did not answer ({type(exc).__name__}): the wait polls.",
                               code="push_unavailable", method=call.method, url=call.path)

    @staticmethod
    def _request_headers(call: Call[Any]) -> dict[str, str]:
        return {"Idempotency-Key": call.request_key} if call.request_key else {}

    def _judge(self, call: Call[T], response: httpx.Response, attempt: int) -> T | _Retry:
        """The parsed answer, a `_Retry` after a retryable error, or the mapped exception raised."""
        body = _decode(response)
        if response.is_success:
            return call.parse(body)
        code = body.get("code") if isinstance(body, dict) else None
        delay = self.retry.after_response(attempt, response, code, replayable=call.replayable)
        if delay is not None:
            log.info("%s %s answered %s %s; retry %d in %.2f s", call.method, call.path, response.status_code,
                     code or "", attempt, delay)
            return _Retry(delay)
        raise error_from_response(response.status_code, body, response.text, method=call.method,
                                  url=str(response.request.url))

    def _after_exception(self, call: Call[Any], exc: httpx.TransportError, attempt: int) -> float:
        """The wait before retrying after no answer; raises TransportError when the retries are spent."""
        delay = self.retry.after_exception(attempt, exc, replayable=call.replayable)
        if delay is None:
            raise TransportError(
                f"No answer after {attempt} attempt(s): {type(exc).__name__}: {exc}", code="transport_error",
                method=call.method, url=call.path,
            ) from exc
        log.info("%s %s failed (%s); retry %d in %.2f s", call.method, call.path, type(exc).__name__, attempt, delay)
        return delay


# --- operations as methods of both clients -----------------------------------------------------------------


def _signature_of(build: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(build).replace(return_annotation=inspect.Signature.empty)


class _Op(Generic[P, T]):
    """Base of the three descriptors: remembers the operation, binds it once per client instance."""

    build: Callable[P, Any]

    def __init__(self, build: Callable[P, Any]) -> None:
        self.build = build
        self.__doc__ = build.__doc__
        self.name = build.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def _bind(self, obj: Any) -> Any:
        raise NotImplementedError

    def _get(self, obj: Any) -> Any:
        if obj is None:
            return self
        method = self._bind(obj)
        functools.update_wrapper(method, self.build)
        method.__signature__ = _signature_of(self.build)
        obj.__dict__[self.name] = method  # bound once: later lookups find the instance attribute
        return method


class _CallOp(_Op[P, T]):
    """An operation of one request: `T` from HarnessClient, an awaitable `T` from AsyncHarnessClient."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        super().__init__(build)
        self.build = build

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self, obj: HarnessClient, owner: type | None = None) -> Callable[P, T]: ...
    @overload
    def __get__(self, obj: AsyncHarnessClient, owner: type | None = None) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self._get(obj)

    def _bind(self, obj: HarnessClient | AsyncHarnessClient) -> Any:
        build, execute = self.build, obj._execute

        if isinstance(obj, AsyncHarnessClient):
            async def async_method(*args: P.args, **kwargs: P.kwargs) -> T:
                return await obj._execute(build(*args, **kwargs))
            return async_method

        def method(*args: P.args, **kwargs: P.kwargs) -> T:
            return cast(T, execute(build(*args, **kwargs)))
        return method


class _PagedOp(_Op[P, T]):
    """A paginated list: an iterator over every item (the pages fetched as it goes), async on AsyncHarnessClient."""

    def __init__(self, build: Callable[P, Paged[T]]) -> None:
        super().__init__(build)
        self.build = build

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self, obj: HarnessClient, owner: type | None = None) -> Callable[P, Iterator[T]]: ...
    @overload
    def __get__(self, obj: AsyncHarnessClient, owner: type | None = None) -> Callable[P, AsyncIterator[T]]: ...
    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self._get(obj)

    def _bind(self, obj: HarnessClient | AsyncHarnessClient) -> Any:
        build, iterate = self.build, obj._iterate

        def method(*args: P.args, **kwargs: P.kwargs) -> Any:
            return iterate(build(*args, **kwargs))
        return method


class _StepsOp(_Op[P, T]):
    """An operation of several requests (and waits), driven by the client: `T`, or an awaitable `T`."""

    def __init__(self, build: Callable[P, Steps[T]]) -> None:
        super().__init__(build)
        self.build = build

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self, obj: HarnessClient, owner: type | None = None) -> Callable[P, T]: ...
    @overload
    def __get__(self, obj: AsyncHarnessClient, owner: type | None = None) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self._get(obj)

    def _bind(self, obj: HarnessClient | AsyncHarnessClient) -> Any:
        build, drive = self.build, obj._drive

        if isinstance(obj, AsyncHarnessClient):
            async def async_method(*args: P.args, **kwargs: P.kwargs) -> T:
                return await obj._drive(build(*args, **kwargs))
            return async_method

        def method(*args: P.args, **kwargs: P.kwargs) -> T:
            return cast(T, drive(build(*args, **kwargs)))
        return method


class _Operations:
    """Every operation of the agent API, as a method (see `harness_client.operations` for each one's docs)."""

    # tokens narrowed to one end user (for_user mints them)
    narrow_token = _CallOp(ops.narrow_token)
    # sessions and items
    create_session = _CallOp(ops.create_session)
    get_session = _CallOp(ops.get_session)
    list_sessions = _PagedOp(ops.list_sessions)
    transition_session = _CallOp(ops.transition_session)
    append_items = _CallOp(ops.append_items)
    list_items = _PagedOp(ops.list_items)
    recent_items = _StepsOp(ops.recent_items)
    latest_items = _CallOp(ops.latest_items)
    pop_item = _CallOp(ops.pop_item)
    trim_items = _CallOp(ops.trim_items)
    compact_items = _CallOp(ops.compact_items)
    clear_items = _CallOp(ops.clear_items)
    session_by_ref = _CallOp(ops.session_by_ref)
    # runs and events
    create_run = _CallOp(ops.create_run)
    get_run = _CallOp(ops.get_run)
    list_runs = _PagedOp(ops.list_runs)
    claim_run = _CallOp(ops.claim_run)
    heartbeat_run = _CallOp(ops.heartbeat_run)
    transition_run = _CallOp(ops.transition_run)
    report_usage = _CallOp(ops.report_usage)
    append_event = _CallOp(ops.append_event)
    list_events = _PagedOp(ops.list_events)
    # tasks
    create_task = _CallOp(ops.create_task)
    get_task = _CallOp(ops.get_task)
    save_task = _CallOp(ops.save_task)
    transition_task = _CallOp(ops.transition_task)
    list_tasks = _PagedOp(ops.list_tasks)
    # checkpoints
    create_checkpoint = _CallOp(ops.create_checkpoint)
    get_checkpoint = _CallOp(ops.get_checkpoint)
    list_checkpoints = _PagedOp(ops.list_checkpoints)
    latest_checkpoint = _CallOp(ops.latest_checkpoint)
    checkpoint_lineage = _CallOp(ops.checkpoint_lineage)
    # approvals
    request_approval = _CallOp(ops.request_approval)
    get_approval = _CallOp(ops.get_approval)
    list_approvals = _PagedOp(ops.list_approvals)
    decide_approval = _CallOp(ops.decide_approval)
    report_approval_outcome = _CallOp(ops.report_approval_outcome)
    wait_for_approval = _StepsOp(ops.wait_for_approval)
    # the tool registry
    register_tool_schema = _CallOp(ops.register_tool_schema)
    list_tool_schemas = _PagedOp(ops.list_tool_schemas)
    get_tool_schema = _CallOp(ops.get_tool_schema)
    # external effects
    intend_effect = _CallOp(ops.intend_effect)
    deliver_effect = _CallOp(ops.deliver_effect)
    get_effect = _CallOp(ops.get_effect)
    list_effects = _PagedOp(ops.list_effects)
    # forks and webhooks
    fork_checkpoint = _CallOp(ops.fork_checkpoint)
    register_webhook = _CallOp(ops.register_webhook)
    list_webhooks = _PagedOp(ops.list_webhooks)
    deactivate_webhook = _CallOp(ops.deactivate_webhook)
    # retention
    get_retention = _CallOp(ops.get_retention)
    set_retention = _CallOp(ops.set_retention)
    retention_dry_run = _CallOp(ops.retention_dry_run)
    # approval policies
    list_approval_policies = _PagedOp(ops.list_approval_policies)
    publish_approval_policy = _CallOp(ops.publish_approval_policy)
    list_reviewer_groups = _PagedOp(ops.list_reviewer_groups)
    # questions to people
    ask_question = _CallOp(ops.ask_question)
    get_question = _CallOp(ops.get_question)
    list_questions = _PagedOp(ops.list_questions)
    answer_question = _CallOp(ops.answer_question)
    cancel_question = _CallOp(ops.cancel_question)
    wait_for_question = _StepsOp(ops.wait_for_question)
    ask = _StepsOp(ops.ask)
    # standing approvals
    list_standing_approvals = _PagedOp(ops.list_standing_approvals)
    get_standing_approval = _CallOp(ops.get_standing_approval)
    create_standing_approval = _CallOp(ops.create_standing_approval)
    revoke_standing_approval = _CallOp(ops.revoke_standing_approval)
    # handoffs
    issue_handoff = _CallOp(ops.issue_handoff)
    list_handoffs = _PagedOp(ops.list_handoffs)
    get_handoff = _CallOp(ops.get_handoff)
    accept_handoff = _CallOp(ops.accept_handoff)
    return_handoff = _CallOp(ops.return_handoff)
    cancel_handoff = _CallOp(ops.cancel_handoff)
    # memory
    propose_memory = _CallOp(ops.propose_memory)
    get_memory = _CallOp(ops.get_memory)
    memory_chain = _CallOp(ops.memory_chain)
    list_memory = _PagedOp(ops.list_memory)
    retrieve_memory = _CallOp(ops.retrieve_memory)
    supersede_memory = _CallOp(ops.supersede_memory)
    memory_conflicts = _CallOp(ops.memory_conflicts)
    build_context = _CallOp(ops.build_context)
    store_get = _CallOp(ops.store_get)
    store_put = _CallOp(ops.store_put)
    store_delete = _CallOp(ops.store_delete)
    store_search = _CallOp(ops.store_search)
    store_namespaces = _CallOp(ops.store_namespaces)
    get_context = _CallOp(ops.get_context)
    review_memory = _CallOp(ops.review_memory)
    expire_memory = _CallOp(ops.expire_memory)
    delete_memory = _CallOp(ops.delete_memory)
    erase_memory = _CallOp(ops.erase_memory)
    erase_person = _CallOp(ops.erase_person)
    # Run bundles (operators and admins)
    export_bundle = _CallOp(ops.export_bundle)
    import_bundle = _CallOp(ops.import_bundle)
    bulk_delete_memory = _CallOp(ops.bulk_delete_memory)
    bulk_expire_memory = _CallOp(ops.bulk_expire_memory)
    list_held_memory = _PagedOp(ops.list_held_memory)
    # LangGraph threads (harness_client.langgraph.HarnessSaver)
    put_thread_checkpoint = _CallOp(ops.put_thread_checkpoint)
    put_thread_writes = _CallOp(ops.put_thread_writes)
    get_thread_checkpoint = _StepsOp(ops.get_thread_checkpoint)
    thread_checkpoints = _CallOp(ops.thread_checkpoints)
    delete_thread = _CallOp(ops.delete_thread)
    ensure_thread = _CallOp(ops.ensure_thread)
    copy_thread = _CallOp(ops.copy_thread)
    prune_threads = _CallOp(ops.prune_threads)
    delete_thread_runs = _CallOp(ops.delete_thread_runs)
    get_thread_ttl = _CallOp(ops.get_thread_ttl)
    set_thread_ttl = _CallOp(ops.set_thread_ttl)


# --- the two transports -----------------------------------------------------------------------------------


class HarnessClient(_Base, _Operations):
    """The Harness Console agent API, synchronously.

    `HarnessClient()` reads `HARNESS_URL` (the server, e.g. `http://127.0.0.1:8000`) and `HARNESS_TOKEN`
    (an agent token); arguments override them. `push_url` (or `HARNESS_PUSH_URL`) is where the waits are (the
    ASGI process, `manage.py mcp`; default: the server's own origin, "" for none: `wait_for_approval` then polls).
    `retry` bounds the retries (`RetryPolicy(max_attempts=1)`
    turns them off); `transport` replaces httpx's (tests, proxies, mounts). Use it as a context manager or
    `close()` it. Thread-safe: one client can serve many threads.
    """

    def __init__(
        self, base_url: str | None = None, token: str | None = None, *, timeout: float | httpx.Timeout = 30.0,
        retry: RetryPolicy | None = None, headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None, push_url: str | None = None,
    ) -> None:
        super().__init__(base_url, token, retry=retry, headers=headers, push_url=push_url)
        self._http = httpx.Client(base_url=self.base_url, headers=self._headers, timeout=timeout, transport=transport)

    def for_user(self, end_user: str, *, session: int | None = None, agent: str | None = None,
                 expires_in: int = NARROWED_SECONDS) -> HarnessClient:
        """A client bound to one end user: every call carries a token narrowed to `end_user` (and to `session`, and
        the agent identity `agent`, when given), minted with this client's token on first use and again before it
        expires. Its sessions are that user's (the ones it creates are tagged with it), its memory `user:<id>`
        and the scopes the write policy lets it reach; other operations answer 403 `narrowed_token_scope`. It
        shares this client's connections: close this one, not it."""
        child = HarnessClient.__new__(HarnessClient)
        child._narrowed(self, _Narrowing(self, end_user, session, agent, expires_in))
        child._http = self._http
        return child

    def _authorization(self, renew: bool = False) -> dict[str, str]:
        narrowing = self._narrowing
        if narrowing is None:
            return {}
        with narrowing.lock:
            if renew or narrowing.due() or narrowing.secret is None:
                started = time.monotonic()
                narrowing.take(started, narrowing.parent._execute(narrowing.call()))
            return {"Authorization": f"Bearer {narrowing.secret}"}

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _execute(self, call: Call[T]) -> T:
        """Send one call, retrying (same Idempotency-Key) as the policy allows; its parsed answer or an error."""
        attempt, renewed = 0, False
        while True:
            attempt += 1
            url, extra = self._push_target(call)
            try:
                response = self._http.request(call.method, url, params=call.params, json=call.json,
                                              headers={**self._request_headers(call), **self._authorization()},
                                              **extra)
            except httpx.TransportError as exc:
                if call.push:  # no push here (nothing listens, a proxy without the route): the caller polls
                    raise self._push_lost(call, exc) from exc
                time.sleep(self._after_exception(call, exc, attempt))
                continue
            if response.status_code == 401 and self._narrowing is not None and not renewed:
                self._authorization(renew=True)  # expired early (another clock): once more with a fresh token
                renewed = True
                continue
            outcome = self._judge(call, response, attempt)
            if isinstance(outcome, _Retry):
                time.sleep(outcome.delay)
                continue
            return outcome

    def _iterate(self, paged: Paged[T]) -> Iterator[T]:
        call = paged.first
        while True:
            page = self._execute(call)
            yield from page.results
            if page.next is None:
                return
            call = paged.follow(page.next)

    def _drive(self, steps: Steps[T]) -> T:
        try:
            instruction = next(steps)
            while True:
                if isinstance(instruction, Sleep):
                    time.sleep(instruction.seconds)
                    instruction = steps.send(None)
                    continue
                try:
                    answer = self._execute(instruction)
                except HarnessError as exc:
                    instruction = steps.throw(exc)
                else:
                    instruction = steps.send(answer)
        except StopIteration as stop:
            return cast(T, stop.value)
        finally:
            steps.close()


class AsyncHarnessClient(_Base, _Operations):
    """The Harness Console agent API for asyncio: the same methods as `HarnessClient`, awaited (the lists are
    async iterators: `async for run in client.list_runs(): ...`).

    Configured the same way (`HARNESS_URL`, `HARNESS_TOKEN`, or arguments); `transport` takes an
    `httpx.AsyncBaseTransport`. Use it as an async context manager or `await aclose()`.
    """

    def __init__(
        self, base_url: str | None = None, token: str | None = None, *, timeout: float | httpx.Timeout = 30.0,
        retry: RetryPolicy | None = None, headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None, push_url: str | None = None,
    ) -> None:
        super().__init__(base_url, token, retry=retry, headers=headers, push_url=push_url)
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=self._headers, timeout=timeout,
                                       transport=transport)

    def for_user(self, end_user: str, *, session: int | None = None, agent: str | None = None,
                 expires_in: int = NARROWED_SECONDS) -> AsyncHarnessClient:
        """`HarnessClient.for_user`, for asyncio."""
        child = AsyncHarnessClient.__new__(AsyncHarnessClient)
        child._narrowed(self, _Narrowing(self, end_user, session, agent, expires_in))
        child._http = self._http
        return child

    async def _authorization(self, renew: bool = False) -> dict[str, str]:
        narrowing = self._narrowing
        if narrowing is None:
            return {}
        if narrowing.async_lock is None:
            narrowing.async_lock = asyncio.Lock()
        async with narrowing.async_lock:
            if renew or narrowing.due() or narrowing.secret is None:
                started = time.monotonic()
                narrowing.take(started, await narrowing.parent._execute(narrowing.call()))
            return {"Authorization": f"Bearer {narrowing.secret}"}

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def _execute(self, call: Call[T]) -> T:
        attempt, renewed = 0, False
        while True:
            attempt += 1
            url, extra = self._push_target(call)
            try:
                headers = {**self._request_headers(call), **await self._authorization()}
                response = await self._http.request(call.method, url, params=call.params, json=call.json,
                                                    headers=headers, **extra)
            except httpx.TransportError as exc:
                if call.push:
                    raise self._push_lost(call, exc) from exc
                await asyncio.sleep(self._after_exception(call, exc, attempt))
                continue
            if response.status_code == 401 and self._narrowing is not None and not renewed:
                await self._authorization(renew=True)  # expired early (another clock): once more, a fresh token
                renewed = True
                continue
            outcome = self._judge(call, response, attempt)
            if isinstance(outcome, _Retry):
                await asyncio.sleep(outcome.delay)
                continue
            return outcome

    async def _iterate(self, paged: Paged[T]) -> AsyncIterator[T]:
        call = paged.first
        while True:
            page = await self._execute(call)
            for item in page.results:
                yield item
            if page.next is None:
                return
            call = paged.follow(page.next)

    async def _drive(self, steps: Steps[T]) -> T:
        try:
            instruction = next(steps)
            while True:
                if isinstance(instruction, Sleep):
                    await asyncio.sleep(instruction.seconds)
                    instruction = steps.send(None)
                    continue
                try:
                    answer = await self._execute(instruction)
                except HarnessError as exc:
                    instruction = steps.throw(exc)
                else:
                    instruction = steps.send(answer)
        except StopIteration as stop:
            return cast(T, stop.value)
        finally:
            steps.close()


_C = TypeVar("_C", HarnessClient, AsyncHarnessClient)


def counterpart(have: HarnessClient | AsyncHarnessClient, kind: type[_C]) -> _C:
    """A client of the other kind (sync for async, or async for sync) for the same server and token, bound to the
    same end user (with its own narrowed token, minted with the same parent token) when `have` is: never the
    parent's token alone, which would reach every user's threads and memory. The adapters (HarnessSaver,
    HarnessStore) make one when LangGraph calls the other kind of method than the client they were given."""
    narrowing = have._narrowing
    source = narrowing.parent if narrowing is not None else have
    base = kind(source.base_url, source._headers["Authorization"].removeprefix("Bearer "), retry=source.retry,
                push_url=source.push_root or "")
    if narrowing is None:
        return base
    return base.for_user(narrowing.end_user, session=narrowing.session, agent=narrowing.agent,
                         expires_in=narrowing.expires_in)

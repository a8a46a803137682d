"""The client without I/O: what a request is, and how a multi-request operation is written once.

An operation is a plain function that *describes* its HTTP exchange and how to read the answer:

- `Call[T]`: one request (method, path, query, JSON body, Idempotency-Key) and the parser of its answer.
- `Paged[T]`: a cursor-paginated list: the first page's call; the client follows the `next` links.
- `Steps[T]`: a generator that yields calls (and `Sleep`s) and is sent back their parsed answers; what it
  returns is the operation's result (polling an approval, reading the newest items page by page).

`HarnessClient` and `AsyncHarnessClient` execute these with httpx, each with its own transport loop; the
operations themselves (`harness_client.operations`) exist once, so the two clients cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Callable, Generator, Mapping
from decimal import Decimal
from typing import Any, Generic, Literal, TypeVar

from harness_client.models import Page

__all__ = ["ROUTES", "Call", "Paged", "Route", "Sleep", "Steps"]

T = TypeVar("T")
U = TypeVar("U")

Method = Literal["GET", "POST", "PATCH", "PUT"]


@dataclasses.dataclass(frozen=True)
class Call(Generic[T]):
    """One HTTP request and the parser of its 2xx JSON answer.

    `path` is relative to the API root (`.../api/v1/`) or an absolute URL (a pagination link).
    `request_key` is the Idempotency-Key: made once when the call is built, sent again on every retry.
    `replayable` says whether a retry after an ambiguous failure (the reply lost) is safe.
    `push`: a wait served by the push (`harness_client.errors.PushUnavailable` when the client has none).
    """

    method: Method
    path: str
    parse: Callable[[Any], T]
    params: Mapping[str, str | list[str]] | None = None
    json: Any = None
    request_key: str | None = None
    replayable: bool = True
    # A wait of the push (the ASGI process's long poll): `path` is under the client's push root, not its API root,
    # and `timeout` (s) is how long the answer may take, the long poll's own timeout plus a margin.
    push: bool = False
    timeout: float | None = None


@dataclasses.dataclass(frozen=True)
class Paged(Generic[T]):
    """A cursor-paginated list: `first` fetches the first page; the pages after it are its `next` links."""

    first: Call[Page[T]]

    def follow(self, url: str) -> Call[Page[T]]:
        return dataclasses.replace(self.first, path=url, params=None)


@dataclasses.dataclass(frozen=True)
class Sleep:
    """Yielded by a `Steps` operation: wait this long (time.sleep or asyncio.sleep, as the client does)."""

    seconds: float


# A multi-request operation: `answer = yield call` (or `yield Sleep(s)`), `return result`. An error answer to a
# call is thrown into the generator at its `yield`.
Steps = Generator["Call[Any] | Sleep", Any, T]


@dataclasses.dataclass(frozen=True)
class Route:
    """One endpoint of the OpenAPI schema: `template` is its path under /api/v1/ (`{id}` for the one
    path parameter the API uses), `operation_id` its operationId (tests check every one is covered)."""

    method: Method
    template: str
    operation_id: str

    def call(
        self, *, parse: Callable[[Any], T], id: int | None = None, params: Mapping[str, Any] | None = None,
        json: Mapping[str, Any] | None = None, request_key: str | None = None,
    ) -> Call[T]:
        path = self.template
        if "{id}" in path:
            path = path.replace("{id}", str(_id(id)))
        query = query_params(params) if params else None
        if self.method == "GET":
            return Call("GET", path, parse, params=query)
        body = json_value(dict(json or {}))
        if self.method == "POST":
            return Call("POST", path, parse, params=query, json=body, request_key=request_key or uuid.uuid4().hex)
        if self.method == "PUT":  # the whole new state: sending it twice leaves what sending it once does
            return Call("PUT", path, parse, params=query, json=body)
        return Call(self.method, path, parse, params=query, json=body, replayable=False)

    def paged(self, parse_item: Callable[[Any], U], *, id: int | None = None, params: Mapping[str, Any] | None = None,
              page_size: int | None = None) -> Paged[U]:
        query = {**(params or {}), "limit": page_size}
        return Paged(self.call(parse=page_of(parse_item), id=id, params=query))


ROUTES: dict[str, Route] = {}


def route(method: Method, template: str, operation_id: str) -> Route:
    found = ROUTES.setdefault(operation_id, Route(method, template, operation_id))
    if found != Route(method, template, operation_id):
        raise ValueError(f"operation {operation_id} declared twice, differently")
    return found


# --- encoding and decoding ---------------------------------------------------------------------------


def _id(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TypeError(f"an id is a positive int, not {value!r}")
    return value


def json_value(value: Any) -> Any:
    """A body value as JSON: date-times in ISO 8601, Decimals as strings; mappings and sequences deeply."""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return value


def query_params(params: Mapping[str, Any]) -> dict[str, str | list[str]]:
    """Query parameters as strings, leaving out the ones that are None; a list is the parameter repeated."""
    out: dict[str, str | list[str]] = {}
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, list | tuple):
            out[name] = [str(v) for v in value]
        elif isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, dt.datetime | dt.date):
            out[name] = value.isoformat()
        else:
            out[name] = str(value)
    return out


def fields(**values: Any) -> dict[str, Any]:
    """A request body of the given fields, leaving out the ones that are None (the server's default)."""
    return {name: value for name, value in values.items() if value is not None}


def page_of(parse_item: Callable[[Any], T]) -> Callable[[Any], Page[T]]:
    def parse(body: Any) -> Page[T]:
        return Page([parse_item(row) for row in body["results"]], body.get("next"), body.get("previous"))

    return parse


def list_of(parse_item: Callable[[Any], T]) -> Callable[[Any], list[T]]:
    def parse(body: Any) -> list[T]:
        return [parse_item(row) for row in body]

    return parse

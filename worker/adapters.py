"""Tool adapters: how the resume worker executes an approved action.

Adapters are registered by name in `settings.HARNESS_TOOL_ADAPTERS` and resolved when a run resumes,
never cached at import, so a configuration change (or a removed adapter) is seen by the next resume:

    HARNESS_TOOL_ADAPTERS = {
        "publish_chapter": {"kind": "python", "callable": "myproject.tools.publish_chapter"},
        "send_invoice": {"kind": "http", "url": "https://billing.internal/invoices",
                         "timeout": 10, "connect_timeout": 3, "headers": {"X-Env": "prod"},
                         "required_arguments": ["customer", "amount"]},
    }

Every call carries the approval's idempotency key: the HTTP adapter sends it as the `Idempotency-Key`
header, the Python adapter passes it as the keyword argument `idempotency_key`.

Whether a call whose outcome is unknown (a crash, a timeout, a lost reply) may be sent again is the
adapter's declaration, never assumed (seed 002, section 12: "if you cannot prove whether a side effect
happened, stop"):

- `"honours_idempotency_key": true`: the tool deduplicates by the key, so the worker re-sends under it;
- `"status_url"` (http: GET with the key's header; 200 and a JSON body is the result, 404 is "never
  happened") or `"lookup"` (python: a dotted path, `lookup(idempotency_key=...) -> Lookup`): the worker asks;
- neither: the run blocks at `unknown_effect` and a person decides in the console (mark delivered with the
  evidence, retry under the same key, or abandon).

A definite refusal (an HTTP 4xx other than 408/409/425/429, or `ToolRefused` from a Python tool) is not an
unknown outcome: the effect ends `refused` with the tool's answer. A 2xx whose body is not JSON is the
tool's result all the same: it is recorded as the raw body and its SHA-256 (`unparsed_result`).
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import requests
from django.conf import settings
from django.utils.module_loading import import_string

IDEMPOTENCY_HEADER = "Idempotency-Key"


# The unparsed body kept of a 2xx that is not JSON (its hash covers all of it).
RAW_BODY_MAX_CHARS = 20_000
# HTTP statuses that are a refusal only for now: a timeout, a conflict, too early, too many requests.
_NOT_DEFINITE = (408, 409, 425, 429)


class AdapterError(Exception):
    """A call whose outcome is unknown: it may or may not have happened (a timeout, a 5xx, a lost reply)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class ToolRefused(Exception):
    """The tool definitely did not do it (an HTTP 4xx, say): `answer` is what it said, `category` why
    (`invalid_input` or `permission`, runs_app.models.FailureCategory)."""

    def __init__(self, message: str, *, answer: Any, category: str = "invalid_input") -> None:
        super().__init__(message)
        self.answer = answer
        self.category = category


@dataclass(frozen=True)
class Lookup:
    """What the tool says about a key: `found` with its result, or definitely never happened."""

    found: bool
    result: Any = None


class ToolAdapter(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def honours_idempotency_key(self) -> bool: ...

    @property
    def can_look_up(self) -> bool: ...

    def incompatibility(self, arguments: Any) -> str | None: ...

    def call(self, arguments: Any, *, idempotency_key: str) -> Any: ...

    def lookup(self, *, idempotency_key: str) -> Lookup: ...


def unparsed_result(body: bytes, *, status: int, content_type: str) -> dict[str, Any]:
    """A 2xx body the adapter cannot parse, as the result: the tool answered, so it is not its failure."""
    return {"unparsed_body": body.decode("utf-8", errors="replace")[:RAW_BODY_MAX_CHARS],
            "body_sha256": hashlib.sha256(body).hexdigest(), "body_bytes": len(body), "status": status,
            "content_type": content_type}


def _refusal_category(status: int) -> str:
    return "permission" if status in (401, 403) else "invalid_input"


def _missing_arguments(required: list[str], arguments: Any) -> str | None:
    if not required:
        return None
    if not isinstance(arguments, dict):
        return "the adapter takes an object of arguments"
    missing = [name for name in required if name not in arguments]
    return f"missing arguments: {', '.join(missing)}" if missing else None


@dataclass(frozen=True)
class HttpAdapter:
    name: str
    url: str
    timeout: float = 10.0
    connect_timeout: float = 3.0
    headers: dict[str, str] = field(default_factory=dict)
    required_arguments: list[str] = field(default_factory=list)
    honours_idempotency_key: bool = False
    status_url: str = ""

    @property
    def can_look_up(self) -> bool:
        return bool(self.status_url)

    def incompatibility(self, arguments: Any) -> str | None:
        if not self.url.startswith(("http://", "https://")):
            return f"the adapter URL {self.url!r} is not http(s)"
        return _missing_arguments(self.required_arguments, arguments)

    def call(self, arguments: Any, *, idempotency_key: str) -> Any:
        headers = {**self.headers, IDEMPOTENCY_HEADER: idempotency_key}
        try:
            response = requests.post(
                self.url, json={"tool": self.name, "arguments": arguments}, headers=headers,
                timeout=(self.connect_timeout, self.timeout),
            )
        except requests.RequestException as exc:
            # The request may or may not have arrived: the outcome is unknown.
            raise AdapterError(f"{type(exc).__name__}: {exc}") from exc
        self._refused_or_unknown(response)
        try:
            return response.json()
        except ValueError:
            return unparsed_result(response.content, status=response.status_code,
                                   content_type=response.headers.get("Content-Type", ""))

    def lookup(self, *, idempotency_key: str) -> Lookup:
        """GET `status_url` with the key: 200 is the result, 404 that nothing happened under it; else unknown."""
        headers = {**self.headers, IDEMPOTENCY_HEADER: idempotency_key}
        try:
            response = requests.get(self.status_url, headers=headers, timeout=(self.connect_timeout, self.timeout))
        except requests.RequestException as exc:
            raise AdapterError(f"the lookup failed: {type(exc).__name__}: {exc}") from exc
        if response.status_code == 404:
            return Lookup(found=False)
        if response.status_code != 200:
            raise AdapterError(f"the lookup answered HTTP {response.status_code}")
        try:
            return Lookup(found=True, result=response.json())
        except ValueError:
            return Lookup(found=True, result=unparsed_result(
                response.content, status=200, content_type=response.headers.get("Content-Type", "")))

    @staticmethod
    def _refused_or_unknown(response: requests.Response) -> None:
        code = response.status_code
        if 400 <= code < 500 and code not in _NOT_DEFINITE:
            raise ToolRefused(f"HTTP {code}: {response.text[:200]}", category=_refusal_category(code),
                              answer={"status": code, "body": response.text[:RAW_BODY_MAX_CHARS],
                                      "content_type": response.headers.get("Content-Type", "")})
        if code >= 300:
            raise AdapterError(f"HTTP {code}: {response.text[:200]}")


@dataclass(frozen=True)
class PythonAdapter:
    name: str
    function: Callable[..., Any]
    required_arguments: list[str] = field(default_factory=list)
    honours_idempotency_key: bool = False
    look_up: Callable[..., Lookup] | None = None

    @property
    def can_look_up(self) -> bool:
        return self.look_up is not None

    def incompatibility(self, arguments: Any) -> str | None:
        return _missing_arguments(self.required_arguments, arguments)

    def call(self, arguments: Any, *, idempotency_key: str) -> Any:
        return self.function(arguments, idempotency_key=idempotency_key)

    def lookup(self, *, idempotency_key: str) -> Lookup:
        if self.look_up is None:
            raise AdapterError(f"the adapter {self.name!r} cannot look an outcome up")
        found = self.look_up(idempotency_key=idempotency_key)
        if not isinstance(found, Lookup):
            raise AdapterError(f"the lookup of {self.name!r} did not answer a Lookup")
        return found


class AdapterConfigError(Exception):
    pass


def adapter_resolve(name: str) -> ToolAdapter | None:
    """The adapter registered under `name` right now, or None. A broken entry raises AdapterConfigError."""
    config = getattr(settings, "HARNESS_TOOL_ADAPTERS", {}).get(name)
    if config is None:
        return None
    if not isinstance(config, dict):
        raise AdapterConfigError(f"HARNESS_TOOL_ADAPTERS[{name!r}] is not an object")
    kind = config.get("kind")
    required = list(config.get("required_arguments", []))
    honours = config.get("honours_idempotency_key", False)
    if not isinstance(honours, bool):
        raise AdapterConfigError(f"the adapter {name!r}: honours_idempotency_key is true or false")
    if kind == "http":
        if not config.get("url"):
            raise AdapterConfigError(f"the http adapter {name!r} has no url")
        status_url = config.get("status_url", "")
        if status_url and not str(status_url).startswith(("http://", "https://")):
            raise AdapterConfigError(f"the http adapter {name!r}: status_url is not http(s)")
        return HttpAdapter(
            name=name, url=config["url"], timeout=float(config.get("timeout", 10)),
            connect_timeout=float(config.get("connect_timeout", 3)), headers=dict(config.get("headers", {})),
            required_arguments=required, honours_idempotency_key=honours, status_url=str(status_url),
        )
    if kind == "python":
        try:
            function = import_string(config.get("callable", ""))
            look_up = import_string(config["lookup"]) if config.get("lookup") else None
        except ImportError as exc:
            raise AdapterConfigError(f"the python adapter {name!r} cannot be imported: {exc}") from exc
        return PythonAdapter(name=name, function=function, required_arguments=required,
                             honours_idempotency_key=honours, look_up=look_up)
    raise AdapterConfigError(f"the adapter {name!r} has an unknown kind {kind!r}")

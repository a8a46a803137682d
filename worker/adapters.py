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
header (so a retry after a crash is deduplicated by the service, as real idempotent APIs do), the
Python adapter passes it as the keyword argument `idempotency_key`.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import requests
from django.conf import settings
from django.utils.module_loading import import_string

IDEMPOTENCY_HEADER = "Idempotency-Key"


class AdapterError(Exception):
    """A call that did not produce a result. `permanent` says a retry cannot help (a 4xx, say)."""

    def __init__(self, message: str, *, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent


class ToolAdapter(Protocol):
    @property
    def name(self) -> str: ...

    def incompatibility(self, arguments: Any) -> str | None: ...

    def call(self, arguments: Any, *, idempotency_key: str) -> Any: ...


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
            # The request may or may not have arrived: the outcome is unknown, a retry under the
            # same key reconciles it.
            raise AdapterError(f"{type(exc).__name__}: {exc}", permanent=False) from exc
        if 400 <= response.status_code < 500 and response.status_code not in (408, 409, 425, 429):
            raise AdapterError(f"HTTP {response.status_code}: {response.text[:200]}", permanent=True)
        if response.status_code >= 300:
            raise AdapterError(f"HTTP {response.status_code}: {response.text[:200]}", permanent=False)
        try:
            return response.json()
        except ValueError as exc:
            raise AdapterError("the response is not JSON", permanent=True) from exc


@dataclass(frozen=True)
class PythonAdapter:
    name: str
    function: Callable[..., Any]
    required_arguments: list[str] = field(default_factory=list)

    def incompatibility(self, arguments: Any) -> str | None:
        return _missing_arguments(self.required_arguments, arguments)

    def call(self, arguments: Any, *, idempotency_key: str) -> Any:
        return self.function(arguments, idempotency_key=idempotency_key)


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
    if kind == "http":
        if not config.get("url"):
            raise AdapterConfigError(f"the http adapter {name!r} has no url")
        return HttpAdapter(
            name=name, url=config["url"], timeout=float(config.get("timeout", 10)),
            connect_timeout=float(config.get("connect_timeout", 3)), headers=dict(config.get("headers", {})),
            required_arguments=required,
        )
    if kind == "python":
        try:
            function = import_string(config.get("callable", ""))
        except ImportError as exc:
            raise AdapterConfigError(f"the python adapter {name!r} cannot be imported: {exc}") from exc
        return PythonAdapter(name=name, function=function, required_arguments=required)
    raise AdapterConfigError(f"the adapter {name!r} has an unknown kind {kind!r}")

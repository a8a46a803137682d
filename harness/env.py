"""Typed readers for settings that come from the environment.

Each helper fails loudly (ImproperlyConfigured) on a value it cannot parse: a typo in production
configuration should stop the process at start-up, not change behaviour silently.
"""

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise ImproperlyConfigured(f"The environment variable {name} is required.")
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off).")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum of {minimum}.")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def env_secret(name: str, default: str | None = None) -> str:
    """A secret from NAME, or from the file that NAME_FILE names (a Docker/Kubernetes secret mount), so the
    value need not sit in the process's environment (readable in /proc, copied into every child).

    Setting both is refused: which one wins would be a guess. One trailing newline (what `echo` and most
    editors add) is dropped; any other whitespace is part of the secret.
    """
    path = os.environ.get(f"{name}_FILE")
    if path is None:
        return env_str(name, default)
    if name in os.environ:
        raise ImproperlyConfigured(f"Set {name} or {name}_FILE, not both.")
    try:
        with open(path, encoding="utf-8") as handle:
            value = handle.read()
    except OSError as exc:
        raise ImproperlyConfigured(f"{name}_FILE={path!r} cannot be read: {exc.strerror}.") from None
    value = value.removesuffix("\n").removesuffix("\r")
    if not value:
        raise ImproperlyConfigured(f"{name}_FILE={path!r} is empty.")
    return value

"""A LangGraph store's namespaces and values as memory records (issue 34: harness_client.langgraph_store).

A namespace's first label is the memory scope, and for every scope but `project` its second is the scope key:
`("project", *path)`, `("user", "<end user>", *path)`, `("agent", "<agent key>", *path)`,
`("session", "<session id>", *path)`. The rest (`path`) is the caller's, and so is the key. The record keeps the
whole namespace, its key and its value; its content is the value's canonical JSON text (sorted keys), which the
write policy judges and full-text search reads. The scope rules are memory_app.scoping's: nothing here widens them.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.http.errors import ValidationFailed
from memory_app.models import MemoryScope

MAX_LABEL = 200
MAX_DEPTH = 20
WILDCARD = "*"  # in a list_namespaces match condition: any one label


@dataclass(frozen=True)
class Namespace:
    scope: str
    scope_key: str  # "" for the project scope
    labels: tuple[str, ...]  # the whole namespace


def _label(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_LABEL or "\x00" in value:
        raise ValidationFailed(f"A {what} is a non-empty string of at most {MAX_LABEL} characters, without NUL.",
                               code="invalid_namespace")
    return value


def labels_of(values: Sequence[Any], *, what: str = "namespace label", wildcard: bool = False) -> tuple[str, ...]:
    """Checked labels (a prefix or a match condition may be empty; `wildcard`: "*" allowed)."""
    if len(values) > MAX_DEPTH:
        raise ValidationFailed(f"A namespace has at most {MAX_DEPTH} labels.", code="invalid_namespace")
    labels = tuple(_label(v, what) for v in values)
    if not wildcard and WILDCARD in labels:
        raise ValidationFailed('"*" is a wildcard only in a list_namespaces condition.', code="invalid_namespace")
    return labels


def namespace_of(values: Sequence[Any]) -> Namespace:
    """The scope a put's (or a get's) namespace names; 400 `invalid_namespace` for one that names none."""
    labels = labels_of(values)
    if not labels or labels[0] not in MemoryScope.values:
        raise ValidationFailed(f"A namespace starts with its scope: one of {', '.join(MemoryScope.values)}.",
                               code="invalid_namespace")
    scope = labels[0]
    if scope == MemoryScope.PROJECT:
        return Namespace(scope=scope, scope_key="", labels=labels)
    if len(labels) < 2:
        raise ValidationFailed(f"A {scope} namespace names its scope key next: ({scope!r}, <key>, ...).",
                               code="invalid_namespace")
    return Namespace(scope=scope, scope_key=labels[1], labels=labels)


def key_of(value: Any) -> str:
    return _label(value, "key")


def content_of(value: Any) -> str:
    """The text a stored value is judged and searched by: its canonical JSON."""
    if not isinstance(value, dict):
        raise ValidationFailed("A store value is a JSON object.", code="invalid_value")
    return json.dumps(value, sort_keys=True, ensure_ascii=False)

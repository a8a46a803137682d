"""What a JSON request body may name: the fields its operation takes, and nothing else.

DRF drops a field a serializer does not declare, so a misspelt or server-owned field (`parent_checkpoint` for
`parent`, `status`, `version`, `id`) used to be answered 2xx and ignored: a checkpoint without its parent, a
client sure it set something it did not. Here every such field is refused, 400 `unknown_field` naming each one
(`unknown_fields`, a path per field: `items[0].colour`), before anything is validated or written.

The rule is the same for every field a body may not set: whether the server owns it (it appears in answers)
or nobody does, it is an unknown field of that operation. Free-form values (a JSONField, a DictField or a
ListField of plain values: `content`, `state`, `metadata`, `data`...) stay free-form; a nested object with
fixed fields (a nested serializer, or a list of them) is held to its own fields.

Two ways in, one check (`BodyShape.unknown`):
- `InSerializer`, the base of every request serializer: `is_valid` refuses unknown fields first.
- `reject_unknown_fields(data, shape)` for a view that reads its body by hand (a hot path, the thread views):
  the shape comes from the serializer that documents the body (`body_shape`), so the two cannot drift.
"""

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rest_framework import serializers

from harness.http.errors import ValidationFailed

# At most this many paths are named in one answer (a body of 10 000 unknown keys gets a short refusal).
MAX_NAMED = 20


@dataclass(frozen=True)
class BodyShape:
    """The fields a JSON object takes, and the shapes of those whose value is itself an object with fixed fields
    (`objects`), a list of such objects (`items`) or a dict of them (`values`)."""

    fields: frozenset[str]
    objects: Mapping[str, "BodyShape"] = field(default_factory=dict)
    items: Mapping[str, "BodyShape"] = field(default_factory=dict)
    values: Mapping[str, "BodyShape"] = field(default_factory=dict)

    def unknown(self, data: Any, at: str = "") -> list[str]:
        """The paths of the fields of `data` this shape does not take; [] for anything that is not an object
        (the serializer words that error)."""
        if not isinstance(data, dict):
            return []
        found = [] if self.fields.issuperset(data) else [f"{at}{name}" for name in data if name not in self.fields]
        for name, shape in self.objects.items():
            found += shape.unknown(data.get(name), f"{at}{name}.")
        for name, shape in self.items.items():
            if isinstance(value := data.get(name), list):
                for index, item in enumerate(value):
                    found += shape.unknown(item, f"{at}{name}[{index}].")
        for name, shape in self.values.items():
            if isinstance(value := data.get(name), dict):
                for key, item in value.items():
                    found += shape.unknown(item, f"{at}{name}.{key}.")
        return found

    def at(self, path: str) -> "BodyShape | None":
        """The shape of the object that holds the field at `path` (as `unknown` names it), for the suggestion."""
        shape: BodyShape | None = self
        for step in _steps(path)[:-1]:
            if shape is None:
                return None
            name = step.split("[", 1)[0]
            shape = shape.objects.get(name) or shape.items.get(name) or shape.values.get(name)
        return shape


NO_FIELDS = BodyShape(frozenset())  # an operation whose body is empty (or absent)


def _steps(path: str) -> list[str]:
    return path.split(".")


def _shape_of(serializer: serializers.BaseSerializer[Any]) -> BodyShape:
    taken: set[str] = set()
    objects: dict[str, BodyShape] = {}
    items: dict[str, BodyShape] = {}
    values: dict[str, BodyShape] = {}
    for name, declared in serializer.fields.items():  # type: ignore[attr-defined]
        if declared.read_only:
            continue  # an input serializer's read-only field is not an input either
        taken.add(name)
        child = getattr(declared, "child", None)
        if isinstance(declared, serializers.ListSerializer | serializers.ListField):
            if isinstance(child, serializers.BaseSerializer):
                items[name] = _shape_of(child)
        elif isinstance(declared, serializers.BaseSerializer):
            objects[name] = _shape_of(declared)
        elif isinstance(declared, serializers.DictField) and isinstance(child, serializers.BaseSerializer):
            values[name] = _shape_of(child)
    return BodyShape(frozenset(taken), objects, items, values)


_SHAPES: dict[type, BodyShape] = {}


def body_shape(serializer: "type[serializers.BaseSerializer[Any]] | serializers.BaseSerializer[Any]") -> BodyShape:
    """The shape a serializer (a class, or an instance such as drf-spectacular's inline_serializer) declares.

    A class's shape is built once (building its fields copies every declared field) and kept.
    """
    if not isinstance(serializer, type):
        return _shape_of(serializer)
    shape = _SHAPES.get(serializer)
    if shape is None:
        shape = _SHAPES[serializer] = _shape_of(serializer())
    return shape


class UnknownFields(ValidationFailed):
    """400 `unknown_field`: the body names fields its operation does not take; `unknown_fields` lists them."""

    code = "unknown_field"

    def __init__(self, paths: list[str], shape: BodyShape) -> None:
        named = [_with_suggestion(path, shape) for path in paths[:MAX_NAMED]]
        more = f" and {len(paths) - MAX_NAMED} more" if len(paths) > MAX_NAMED else ""
        one = len(paths) == 1
        super().__init__(
            f"Unknown field{'' if one else 's'} {', '.join(named)}{more}: this operation does not take "
            f"{'it' if one else 'them'} (a field the server sets, such as id, status or version, is never taken). "
            "Nothing was written.",
            unknown_fields=paths[:MAX_NAMED],
        )


def _with_suggestion(path: str, shape: BodyShape) -> str:
    """The path, with the field it most likely meant: a close spelling, or the one it extends
    (`parent_checkpoint`: `parent`)."""
    holder = shape.at(path)
    if holder is None:
        return f"`{path}`"
    name = _steps(path)[-1]
    close = difflib.get_close_matches(name, sorted(holder.fields), n=1, cutoff=0.6)
    within = sorted((f for f in holder.fields if len(f) > 2 and (name.startswith(f + "_") or name.endswith("_" + f))),
                    key=len, reverse=True)
    meant = close[0] if close else within[0] if within else None
    return f"`{path}` (did you mean `{meant}`?)" if meant else f"`{path}`"


def reject_unknown_fields(data: Any, shape: BodyShape) -> None:
    """Raise UnknownFields when `data` names a field `shape` does not take (a hand-read body's check)."""
    paths = shape.unknown(data)
    if paths:
        raise UnknownFields(paths, shape)


class InSerializer(serializers.Serializer[None]):
    # The base of every request serializer: a field it does not declare is refused (400 `unknown_field`), and
    # so is one in a nested serializer it declares. Read-only or not, what it does not declare is not an input.
    # An input serializer only reads a body, never an instance: Serializer[None].
    # (No docstring: the schema would show it as every request body's description.)

    def is_valid(self, *, raise_exception: bool = False) -> bool:
        if not hasattr(self, "_validated_data"):  # validated once, as DRF's is_valid does
            shape = body_shape(type(self))
            paths = shape.unknown(self.initial_data)
            if paths:
                if raise_exception:
                    raise UnknownFields(paths, shape)
                self._validated_data: Any = {}
                self._errors: Any = {path: ["Unknown field."] for path in paths}
                return False
        return super().is_valid(raise_exception=raise_exception)

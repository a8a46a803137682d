"""The console's edit-and-approve form generated from the tool's declared schema (issue 32): one typed field per
argument (string, integer, number, boolean, an enum as a select, anything else as JSON), the schema's required
arguments required. It parses input only: the decision (runs_app.services.approval_decide) validates the edited
arguments against the schema version the approval names, and a refusal comes back as the failing field's error.

Typed fields are text inputs the server parses (not the browser's number inputs), so a wrong type is the server's
field error, the same one the raw JSON fallback gets.
"""

import json
import re
from typing import Any

from django import forms

# A property is a typed field only under a name that is safe as a form field's name and an element id.
_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
PREFIX = "arg__"
_BOOLEAN_CHOICES = [("true", "true"), ("false", "false")]


def typed_properties(schema: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The schema's properties the typed form can edit, or {} when it cannot edit them all (then only the raw
    JSON form is offered: a form that silently dropped an argument would approve something else)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return {}
    properties: dict[str, Any] = schema["properties"]
    if not properties or not all(_FIELD_NAME.match(name) and isinstance(p, dict) for name, p in properties.items()):
        return {}
    # The stored schema (jsonb) keeps no key order: the required arguments first, in the schema's order, then the
    # others by name.
    required = [name for name in (schema.get("required") or []) if name in properties]
    return {name: properties[name] for name in [*required, *sorted(set(properties) - set(required))]}


def _kind(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return "enum"
    declared = prop.get("type")
    if isinstance(declared, list):  # ["string", "null"] and the like: the non-null one, if just one
        rest = [t for t in declared if t != "null"]
        declared = rest[0] if len(rest) == 1 else None
    return declared if declared in ("string", "integer", "number", "boolean") else "json"


def _json_field(value: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise forms.ValidationError(f"Not valid JSON: {exc.msg}.") from None


def _field(name: str, prop: dict[str, Any], *, required: bool) -> forms.Field:
    label = str(prop.get("title") or name)
    help_text = str(prop.get("description") or "")
    kind = _kind(prop)
    common: dict[str, Any] = {"required": required, "label": label, "help_text": help_text}
    if kind == "enum":
        choices = [(json.dumps(v), str(v)) for v in prop["enum"]]
        return forms.TypedChoiceField(choices=([] if required else [("", "—")]) + choices, coerce=json.loads,
                                      empty_value=None, **common)
    if kind == "boolean":
        return forms.TypedChoiceField(choices=([] if required else [("", "—")]) + _BOOLEAN_CHOICES,
                                      coerce=lambda v: v == "true", empty_value=None, **common)
    if kind == "integer":
        return forms.IntegerField(widget=forms.TextInput(attrs={"inputmode": "numeric"}), **common)
    if kind == "number":
        return forms.FloatField(widget=forms.TextInput(attrs={"inputmode": "decimal"}), **common)
    if kind == "string":
        return forms.CharField(strip=False, widget=forms.Textarea(attrs={"rows": 2})
                               if (prop.get("maxLength") or 201) > 200 else forms.TextInput(), **common)
    return forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
                           help_text=(help_text + " (JSON)").strip(), required=required, label=label)


class TypedEditForm(forms.Form):
    """Edit-and-approve, one field per argument of the schema; `arguments()` is the edited JSON object."""

    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), label="Why they changed",
                             error_messages={"required": "An edit needs a reason: say why the arguments changed."})

    def __init__(self, *args: Any, schema: dict[str, Any] | None, requested: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "typed_%s")
        super().__init__(*args, **kwargs)
        self.properties = typed_properties(schema)
        # Arguments the request carried that the schema does not list (where it allows them) are kept as asked.
        self.kept = {k: v for k, v in (requested or {}).items() if k not in self.properties}
        required = set((schema or {}).get("required") or [])
        for name, prop in self.properties.items():
            field = _field(name, prop, required=name in required)
            if requested and name in requested:
                value = requested[name]
                kind = _kind(prop)
                field.initial = (json.dumps(value) if kind in ("enum", "json")
                                 else ("true" if value else "false") if kind == "boolean" else value)
            self.fields[PREFIX + name] = field

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for name, prop in self.properties.items():
            key = PREFIX + name
            if _kind(prop) == "json" and cleaned.get(key) not in (None, ""):
                try:
                    cleaned[key] = _json_field(cleaned[key])
                except forms.ValidationError as exc:
                    self.add_error(key, exc)
        return cleaned

    def argument_fields(self) -> list[forms.BoundField]:
        return [self[PREFIX + name] for name in self.properties]

    def arguments(self) -> dict[str, Any]:
        """The edited arguments: each filled field's value; an optional field left empty is left out."""
        edited = dict(self.kept)
        for name in self.properties:
            value = self.cleaned_data.get(PREFIX + name)
            if value is not None and value != "":
                edited[name] = value
        return edited

    def refuse(self, field: str, message: str) -> None:
        """The decision refused the arguments at `field`: its error, on that field when the form has one."""
        key = PREFIX + field
        self.add_error(key if key in self.fields else None, message)

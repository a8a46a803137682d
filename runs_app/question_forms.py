"""The answer form of a question's page, generated from its answer schema (runs_app.services.questions:
free text, a choice, or a small form of text, number, integer, yes/no and choice fields)."""

from typing import Any

from django import forms


def _field(schema: dict[str, Any], *, label: str, required: bool) -> forms.Field:
    kind, title = schema.get("type"), schema.get("title") or label
    help_text = schema.get("description", "")
    if kind == "string" and isinstance(schema.get("enum"), list):
        return forms.ChoiceField(label=title, help_text=help_text, required=required, widget=forms.RadioSelect,
                                 choices=[(c, c) for c in schema["enum"]])
    if kind == "string":
        return forms.CharField(label=title, help_text=help_text, required=required,
                               max_length=schema.get("maxLength"), min_length=schema.get("minLength"),
                               widget=forms.Textarea(attrs={"rows": 3}))
    if kind == "integer":
        return forms.IntegerField(label=title, help_text=help_text, required=required,
                                  min_value=schema.get("minimum"), max_value=schema.get("maximum"))
    if kind == "number":
        return forms.FloatField(label=title, help_text=help_text, required=required,
                                min_value=schema.get("minimum"), max_value=schema.get("maximum"))
    return forms.BooleanField(label=title, help_text=help_text, required=False)


class AnswerForm(forms.Form):
    """One field named `answer` for free text or a choice; one per property (`f_<name>`) for a form. `answer()` is
    the JSON the service checks against the schema again (the schema, not this form, is the rule)."""

    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    fingerprint = forms.CharField(max_length=64, widget=forms.HiddenInput)

    def __init__(self, *args: Any, schema: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.schema = schema
        if schema.get("type") == "object":
            required = set(schema.get("required") or [])
            self.names = list(schema.get("properties", {}))
            for name, field in schema["properties"].items():
                self.fields[f"f_{name}"] = _field(field, label=name, required=name in required)
        else:
            self.names = []
            self.fields["answer"] = _field(schema, label="Your answer", required=True)

    def answer(self) -> Any:
        data = self.cleaned_data
        if not self.names:
            return data["answer"]
        answer: dict[str, Any] = {}
        for name in self.names:
            value = data.get(f"f_{name}")
            if value in (None, "") and self.schema["properties"][name].get("type") != "boolean":
                continue  # left empty: absent, as JSON Schema sees an optional field
            answer[name] = value
        return answer

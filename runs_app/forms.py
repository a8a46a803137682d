"""Console forms for approval decisions and checkpoint diffs. They validate input only; services decide."""

import json
from typing import Any

from django import forms

from runs_app.models import Risk


class ApprovalFilterForm(forms.Form):
    project = forms.CharField(required=False)
    risk = forms.ChoiceField(required=False, choices=[("", "any risk"), *Risk.choices])
    older_than = forms.ChoiceField(
        required=False, choices=[("", "any age"), ("1h", "older than 1 hour"), ("1d", "older than 1 day"),
                                 ("7d", "older than 7 days")],
    )
    agent = forms.CharField(required=False, max_length=200)


class ApproveForm(forms.Form):
    version = forms.IntegerField(required=False, widget=forms.HiddenInput)


class RejectForm(forms.Form):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Two forms on one page both have a reason field: keep their element ids apart.
        kwargs.setdefault("auto_id", "reject_%s")
        super().__init__(*args, **kwargs)

    version = forms.IntegerField(required=False, widget=forms.HiddenInput)
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 3}))

    def clean_reason(self) -> str:
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError("A rejection needs a reason.")
        return reason


class EditApproveForm(forms.Form):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "edit_%s")
        super().__init__(*args, **kwargs)

    version = forms.IntegerField(required=False, widget=forms.HiddenInput)
    arguments = forms.CharField(widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}))
    reason = forms.CharField(required=False, max_length=2000, help_text="Why the arguments were changed.")

    def clean_arguments(self) -> dict[str, Any]:
        try:
            value = json.loads(self.cleaned_data["arguments"])
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc.msg} (line {exc.lineno}).") from None
        if not isinstance(value, dict):
            raise forms.ValidationError("The arguments are a JSON object.")
        return value


class CheckpointDiffForm(forms.Form):
    a = forms.IntegerField(min_value=1)
    b = forms.IntegerField(min_value=1)

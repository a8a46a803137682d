"""Console (and admin) forms for trimming a session's history. They validate input only; sessions_app.trimming
decides."""

import json
from typing import Any

from django import forms

from sessions_app.models import ItemRole


class TrimForm(forms.Form):
    keep_last = forms.IntegerField(min_value=0, max_value=100_000, label="Keep the newest")
    expected_last_seq = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)
    confirm = forms.BooleanField(required=True, label="Yes, remove the older items")


class CompactForm(forms.Form):
    first_seq = forms.IntegerField(min_value=1, label="From seq")
    last_seq = forms.IntegerField(min_value=1, label="to seq")
    role = forms.ChoiceField(choices=ItemRole.choices, initial=ItemRole.SYSTEM)
    summary = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), max_length=200_000,
                              help_text="JSON, or plain text (kept as a JSON string).")
    expected_last_seq = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)
    confirm = forms.BooleanField(required=True, label="Yes, replace the range with this summary")

    def clean_summary(self) -> Any:
        text: str = self.cleaned_data["summary"].strip()
        if not text:
            raise forms.ValidationError("The summary needs content.")
        try:
            return json.loads(text)
        except ValueError:
            return text

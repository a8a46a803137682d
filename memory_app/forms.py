"""Console forms for memory curation. They validate input only; memory_app.services decides."""

from typing import Any

from django import forms

REASON_MAX = 500


def _reason_field(label: str, *, required: bool = True) -> forms.CharField:
    return forms.CharField(label=label, max_length=REASON_MAX, required=required,
                           error_messages={"required": "Say why: a reason is required."})


class SupersedeForm(forms.Form):
    version = forms.IntegerField(widget=forms.HiddenInput)
    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), max_length=20000)
    reason = _reason_field("Why this edit")

    def clean_content(self) -> str:
        content: str = self.cleaned_data["content"].strip()  # a CharField's value
        if not content:
            raise forms.ValidationError("The new version needs content.")
        return content


class ResolveForm(forms.Form):
    version = forms.IntegerField(widget=forms.HiddenInput)
    keep = forms.IntegerField(min_value=1)


class DeleteForm(forms.Form):
    version = forms.IntegerField(widget=forms.HiddenInput)
    reason = _reason_field("Why delete it")
    confirm = forms.BooleanField(required=True, label="Yes, delete this record")


class BulkForm(forms.Form):
    MAX_IDS = 500
    # No default: a bulk action is picked on purpose (issue 32: it used to default to Delete).
    action = forms.ChoiceField(choices=[("", "Choose an action…"), ("delete", "Delete"), ("expire", "Expire now")],
                               error_messages={"required": "Choose what to do with the selected records."})
    reason = _reason_field("Why", required=False)
    confirm = forms.BooleanField(required=True, label="I am sure")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("action") == "delete" and not (cleaned.get("reason") or "").strip():
            self.add_error("reason", "Say why you delete these records: a reason is required.")
        raw = self.data.getlist("ids") if hasattr(self.data, "getlist") else []
        try:
            ids = sorted({int(value) for value in raw})
        except ValueError:
            raise forms.ValidationError("Record ids are numbers.") from None
        if not ids:
            raise forms.ValidationError("Select at least one record.")
        if len(ids) > self.MAX_IDS:
            raise forms.ValidationError(f"At most {self.MAX_IDS} records at once.")
        cleaned["ids"] = ids
        return cleaned


class ReviewForm(forms.Form):
    decision = forms.ChoiceField(choices=[("accept", "Accept"), ("reject", "Reject")])
    version = forms.IntegerField(widget=forms.HiddenInput)  # the record's version the list showed


class ErasePersonForm(forms.Form):
    """Which person to erase in which project; the preview needs these two, the erasure also a reason and the box."""

    project = forms.TypedChoiceField(coerce=int, choices=())
    subject = forms.CharField(max_length=200, help_text="Their user-scope memory key and the `user` their "
                                                        "sessions' metadata names.")
    reason = forms.CharField(max_length=500, required=False)
    confirm = forms.BooleanField(required=False, label="Yes, erase this person's data now")

    def __init__(self, *args: Any, projects: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = projects  # type: ignore[attr-defined]

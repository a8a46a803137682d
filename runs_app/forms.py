"""Console forms for approval decisions and checkpoint diffs. They validate input only; services decide.

The inbox's filters are a FilterSet (runs_app.filters.ApprovalInboxFilter)."""

import json
from typing import Any

from django import forms

from runs_app.services.approval_actions import EXTEND_MAX_HOURS


class ApproveForm(forms.Form):
    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    # "Approve and don't ask again" (issue 33): the same approval, and a standing approval beside it
    # (runs_app.services.standing_approvals), written together or not at all.
    standing = forms.BooleanField(required=False)
    standing_scope = forms.ChoiceField(required=False, initial="agent", choices=[
        ("agent", "this agent's requests, in any run"), ("session", "this session's requests"),
        ("run", "this run's requests only")])
    standing_match = forms.ChoiceField(required=False, initial="exact", choices=[
        ("exact", "only these exact arguments"), ("any", "any arguments (the tool's schema still applies)")])
    standing_hours = forms.IntegerField(required=False, min_value=1, max_value=24 * 30, initial=8,
                                        widget=forms.NumberInput(attrs={"min": 1, "max": 720}))
    standing_uses = forms.IntegerField(required=False, min_value=1, max_value=1000, initial=10,
                                       widget=forms.NumberInput(attrs={"min": 1, "max": 1000}))


class RejectForm(forms.Form):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Two forms on one page both have a reason field: keep their element ids apart.
        kwargs.setdefault("auto_id", "reject_%s")
        super().__init__(*args, **kwargs)

    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 3}))
    # One of the policy's reject options (the page offers them as radio buttons); the service checks it.
    reject_option = forms.CharField(max_length=80, required=False)

    def clean_reason(self) -> str:
        reason: str = self.cleaned_data["reason"].strip()  # a CharField's value
        if not reason:
            raise forms.ValidationError("A rejection needs a reason.")
        return reason


class EditApproveForm(forms.Form):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "edit_%s")
        super().__init__(*args, **kwargs)

    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    arguments = forms.CharField(widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}))
    # An edit says why (issue 32): the audit entry and the agent read it.
    reason = forms.CharField(max_length=2000, help_text="Why the arguments were changed.",
                             error_messages={"required": "An edit needs a reason: say why the arguments changed."})

    def clean_arguments(self) -> dict[str, Any]:
        try:
            value = json.loads(self.cleaned_data["arguments"])
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc.msg} (line {exc.lineno}).") from None
        if not isinstance(value, dict):
            raise forms.ValidationError("The arguments are a JSON object.")
        return value


class HandoffAnswerForm(forms.Form):
    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)  # the handoff's version the page showed
    result = forms.CharField(widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
                             help_text="The result as JSON; the packet's output schema must accept it.")

    def clean_result(self) -> Any:
        try:
            return json.loads(self.cleaned_data["result"])
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc.msg} (line {exc.lineno}).") from None


class CheckpointDiffForm(forms.Form):
    a = forms.IntegerField(min_value=1)
    b = forms.IntegerField(min_value=1)


class BulkDecisionForm(forms.Form):
    """The inbox's bulk form: one decision and reason for every checked row (the rows are `item` values,
    parsed by runs_app.services.BulkItem)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "bulk_%s")
        super().__init__(*args, **kwargs)

    decision = forms.ChoiceField(choices=[("approve", "Approve"), ("reject", "Reject")])
    reason = forms.CharField(required=False, max_length=2000, help_text="Required to reject.")
class MarkDeliveredForm(forms.Form):
    """A person marks an unknown effect delivered: what shows it happened, and the result it had."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "delivered_%s")
        super().__init__(*args, **kwargs)

    version = forms.IntegerField(required=False, widget=forms.HiddenInput)
    evidence = forms.CharField(max_length=4000, widget=forms.Textarea(attrs={"rows": 3}),
                               help_text="What shows the tool did it (its record, a message id, a screenshot's link).")
    result = forms.CharField(widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
                             help_text="The tool's result, as JSON: bound to the run as if the tool had answered.")

    def clean_evidence(self) -> str:
        evidence: str = self.cleaned_data["evidence"].strip()
        if not evidence:
            raise forms.ValidationError("Marking it delivered needs the evidence.")
        return evidence

    def clean_result(self) -> Any:
        try:
            return json.loads(self.cleaned_data["result"])
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc.msg} (line {exc.lineno}).") from None


class RetryEffectForm(forms.Form):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "retry_%s")
        super().__init__(*args, **kwargs)

    version = forms.IntegerField(required=False, widget=forms.HiddenInput)
    reason = forms.CharField(required=False, max_length=2000, help_text="Why sending it again is safe.")


class AbandonEffectForm(forms.Form):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "abandon_%s")
        super().__init__(*args, **kwargs)

    version = forms.IntegerField(required=False, widget=forms.HiddenInput)
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 3}))

    def clean_reason(self) -> str:
        reason: str = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError("Abandoning it needs a reason.")
        return reason


class ForkForm(forms.Form):
    """Fork a run from a checkpoint (runs_app.services.forks). Posted once without `confirm` to see the diff,
    then again with it to fork."""

    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))
    state = forms.CharField(widget=forms.Textarea(attrs={"rows": 12}), max_length=1_000_000,
                            help_text="The fork's state (JSON object): edit it, or leave it as it is.")
    new_session = forms.BooleanField(required=False, label="In a new session (like this run's)")
    confirm = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def clean_reason(self) -> str:
        reason: str = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError("A fork says why.")
        return reason

    def clean_state(self) -> dict[str, Any]:
        try:
            value = json.loads(self.cleaned_data["state"])
        except ValueError as exc:
            raise forms.ValidationError(f"Not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise forms.ValidationError("The state is a JSON object.")
        return value


class AssignForm(forms.Form):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "assign_%s")
        super().__init__(*args, **kwargs)

    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    assignee = forms.CharField(required=False, max_length=150, help_text="Empty: nobody.")


class RunActionForm(forms.Form):
    """An operator's action on a run (runs_app.services.run_actions): bound to the version its preview showed."""

    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    # Blank or only spaces (the field strips them) is "required": the message says what the reason is for.
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 3}), error_messages={
        "required": "Say why: the reason goes into the audit log and the run's events."})


class ApprovalExtendForm(RunActionForm):
    hours = forms.IntegerField(min_value=1, max_value=EXTEND_MAX_HOURS, initial=24)


class PolicyPublishForm(forms.Form):
    """Publish the next version of a tool's approval policy (runs_app.services.approval_policies). The groups and
    the escalation target are the chosen project's; the service checks that, and the operator role, again."""

    project = forms.ChoiceField()
    tool = forms.CharField(max_length=120, required=False, help_text="Empty: the project's default policy.")
    required_approvals = forms.IntegerField(min_value=1, max_value=20, initial=1,
                                            help_text="Distinct reviewers who must approve (one reject rejects).")
    eligible_groups = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                                help_text="None checked: any reviewer of the project.")
    expires_after_hours = forms.DecimalField(min_value=0, max_digits=6, decimal_places=2, required=False,
                                             label="Expires after (hours)")
    on_expiry = forms.ChoiceField()
    escalate_to = forms.ChoiceField(required=False)
    escalation_expires_after_hours = forms.DecimalField(min_value=0, max_digits=6, decimal_places=2,
                                                        required=False, label="Escalated wait (hours)")
    always_ask = forms.BooleanField(required=False, label="Always ask (no standing approval covers this tool)")
    reject_options = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        help_text="One per line: name | text for the reviewer | text for the agent.")

    def __init__(self, *args: Any, projects: Any = (), groups: Any = (), **kwargs: Any) -> None:
        from runs_app.models import ExpiryAction

        kwargs.setdefault("auto_id", "policy_%s")
        super().__init__(*args, **kwargs)
        group_choices = [(g.pk, f"{g.project.slug} / {g.name}") for g in groups]
        for name, choices in (("project", [(p.pk, p.slug) for p in projects]), ("eligible_groups", group_choices),
                              ("escalate_to", [("", "nobody"), *group_choices]),
                              ("on_expiry", ExpiryAction.choices)):
            field = self.fields[name]
            if isinstance(field, forms.ChoiceField):  # each is declared one above (MultipleChoiceField is one too)
                field.choices = choices

    def clean_reject_options(self) -> list[dict[str, str]]:
        options = []
        for line in self.cleaned_data["reject_options"].splitlines():
            if not line.strip():
                continue
            parts = [part.strip() for part in line.split("|")]
            if len(parts) != 3 or not parts[0]:
                raise forms.ValidationError(f"Not 'name | reviewer text | agent text': {line.strip()!r}")
            options.append({"name": parts[0], "reviewer_text": parts[1], "agent_text": parts[2]})
        return options

"""Console filter form for the session list."""

from django import forms

from sessions_app.models import SessionStatus


class SessionFilterForm(forms.Form):
    project = forms.CharField(required=False)
    status = forms.ChoiceField(required=False, choices=[("", "any status"), *SessionStatus.choices])

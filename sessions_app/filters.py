"""The session list's filters: the API's (`?status=&role=&updated_since=&ref=`) and the console's
(`?project=&status=`). Each narrows what sessions_app.selectors.session_list scoped already."""

import django_filters
from rest_framework import serializers

from harness.http.filters import ApiFilter
from sessions_app.models import Session, SessionRole, SessionStatus


class SessionFilter(django_filters.FilterSet):
    status = ApiFilter(serializers.ChoiceField(choices=SessionStatus.choices))
    role = ApiFilter(serializers.ChoiceField(choices=SessionRole.choices))
    updated_since = ApiFilter(serializers.DateTimeField(), field_name="updated_at", lookup_expr="gte")
    # The client's own reference (unique in a project): how an adapter finds the session it named.
    ref = ApiFilter(serializers.CharField(max_length=64))
    end_user = ApiFilter(serializers.CharField(max_length=200))

    class Meta:
        model = Session
        fields: list[str] = []


class SessionListFilter(django_filters.FilterSet):
    """The console's session list; its form is the page's."""

    project = django_filters.CharFilter(field_name="project__slug")
    status = django_filters.ChoiceFilter(choices=SessionStatus.choices, empty_label="any status")

    class Meta:
        model = Session
        fields: list[str] = []

"""The memory list's filters: the API's (`?project=&scope=&scope_key=&status=&subject=&text=&fresh=`) and
the console's (`?project=&scope=&status=&provenance=&freshness=&text=`). Each narrows what
memory_app.selectors.memory_list scoped already."""

import django_filters
from django.db.models import QuerySet
from django.utils import timezone
from rest_framework import serializers

from harness.http.filters import ApiFilter
from memory_app.models import MemoryRecord, MemoryScope, MemoryStatus, ProvenanceKind
from memory_app.selectors import fresh_q


def _fresh_or_stale(queryset: QuerySet[MemoryRecord], fresh: bool) -> QuerySet[MemoryRecord]:
    return queryset.filter(fresh_q(timezone.now())) if fresh else queryset.exclude(fresh_q(timezone.now()))


class MemoryRecordFilter(django_filters.FilterSet):
    """The API's list of one project's records in every status; `fresh=false` lists only stale ones."""

    # The project the list is of: the view names it (an agent's own, or one of an operator's), so it
    # narrows nothing here.
    project = ApiFilter(serializers.SlugField(), method="named_by_the_view")
    scope = ApiFilter(serializers.ChoiceField(choices=MemoryScope.choices))
    scope_key = ApiFilter(serializers.CharField(max_length=200))
    status = ApiFilter(serializers.ChoiceField(choices=MemoryStatus.choices))
    subject = ApiFilter(serializers.CharField(max_length=200), lookup_expr="icontains")
    text = ApiFilter(serializers.CharField(max_length=500), field_name="content", lookup_expr="icontains")
    fresh = ApiFilter(serializers.BooleanField(allow_null=True, default=None), method="filter_fresh")

    class Meta:
        model = MemoryRecord
        fields: list[str] = []

    def named_by_the_view(self, queryset: QuerySet[MemoryRecord], name: str, value: str) -> QuerySet[MemoryRecord]:
        return queryset

    def filter_fresh(self, queryset: QuerySet[MemoryRecord], name: str, value: bool) -> QuerySet[MemoryRecord]:
        return _fresh_or_stale(queryset, value)


class MemoryListFilter(django_filters.FilterSet):
    """The console's curation list across the viewer's projects; its form is the page's."""

    project = django_filters.CharFilter(field_name="project__slug")
    scope = django_filters.ChoiceFilter(choices=MemoryScope.choices, empty_label="any scope")
    status = django_filters.ChoiceFilter(choices=MemoryStatus.choices, empty_label="any status")
    provenance = django_filters.ChoiceFilter(
        field_name="provenance_kind", choices=ProvenanceKind.choices, empty_label="any provenance"
    )
    freshness = django_filters.ChoiceFilter(
        choices=[("fresh", "fresh"), ("stale", "stale (expired)")], empty_label="fresh or stale",
        method="filter_freshness",
    )
    text = django_filters.CharFilter(field_name="content", lookup_expr="icontains", max_length=200)

    class Meta:
        model = MemoryRecord
        fields: list[str] = []

    def filter_freshness(self, queryset: QuerySet[MemoryRecord], name: str, value: str) -> QuerySet[MemoryRecord]:
        return _fresh_or_stale(queryset, value == "fresh")

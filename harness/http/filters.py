"""List filters as django-filter FilterSets, for the API and the console alike.

The API's filters parse each query parameter with the DRF serializer field every other API input uses
(`ApiFilter(IdField())`, a ChoiceField of the TextChoices, ...), so a filter value is read, refused and
documented exactly as a body field would be: a bad value is a 400 `{"code": "invalid", "fields":
{name: [the field's message]}}`, and the OpenAPI parameter is the field's schema. The console's filter
forms are FilterSets of plain django-filter filters (a bad value there shows the unfiltered list).
"""

import copy
from typing import Any, cast

from django import forms
from django_filters import Filter, FilterSet
from django_filters.rest_framework import DjangoFilterBackend
from django_filters.utils import translate_validation
from drf_spectacular.extensions import OpenApiFilterExtension
from drf_spectacular.plumbing import build_parameter_type
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

# Any DRF serializer field (IdField, a ChoiceField, a DateTimeField, ...): whatever it parses, the filter uses.
DrfField = serializers.Field[Any, Any, Any, Any]


class _DrfField(forms.Field):
    """A form field that parses its value with a DRF serializer field (the value as the API reads it)."""

    def __init__(self, *, drf_field: DrfField, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.drf_field = drf_field

    def clean(self, value: Any) -> Any:
        # As a serializer reads a query string: an absent or empty optional parameter is no filter at all.
        if value is None or value == "":
            return None
        try:
            return self.drf_field.run_validation(value)
        except serializers.ValidationError as exc:
            details = exc.detail if isinstance(exc.detail, list) else [exc.detail]
            # django-filter renders each message with `message % params`: keep a literal % literal.
            raise forms.ValidationError(
                [forms.ValidationError(str(detail).replace("%", "%%"), code=getattr(detail, "code", None))
                 for detail in details]
            ) from None


class ApiFilter(Filter):
    """A query parameter parsed (and documented) by a DRF serializer field; `field_name`/`lookup_expr`
    say what it filters, `method` a FilterSet method that does instead."""

    field_class = _DrfField

    def __init__(self, drf_field: DrfField, **kwargs: Any) -> None:
        super().__init__(drf_field=drf_field, **kwargs)


def validated(filterset: FilterSet) -> FilterSet:
    """The FilterSet, or the API's 400 naming each bad parameter (django-filter's DRF backend's answer)."""
    if not filterset.is_valid():
        # types-django-filter types translate_validation's result as a dict; django-filter returns DRF's
        # ValidationError (the exception its DRF backend raises).
        raise cast(ValidationError, translate_validation(filterset.errors))
    return filterset


class ApiFilterBackend(DjangoFilterBackend):
    """django-filter's DRF backend, for views whose `filterset_class` is made of ApiFilters."""


class ApiFilterParameters(OpenApiFilterExtension):
    """Documents a view's ApiFilters as query parameters, each exactly as its DRF field would be."""

    target_class = "harness.http.filters.ApiFilterBackend"
    priority = 1  # before drf-spectacular's own django-filter extension, which matches every subclass

    def get_schema_operation_parameters(self, auto_schema: Any, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        filterset_class = getattr(auto_schema.view, "filterset_class", None)
        if filterset_class is None:
            return []
        fields = {name: copy.deepcopy(f.extra["drf_field"]) for name, f in filterset_class.base_filters.items()
                  if isinstance(f, ApiFilter)}
        serializer = type(f"{filterset_class.__name__}Parameters", (serializers.Serializer,), fields)()
        mapped = auto_schema._map_serializer(serializer, "request")
        return [
            build_parameter_type(
                name=name, schema=schema, description=schema.pop("description", None),
                location=OpenApiParameter.QUERY, allow_blank=getattr(serializer.fields[name], "allow_blank", True),
            )
            for name, schema in mapped["properties"].items()
        ]

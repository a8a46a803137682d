"""Shared pieces of the agent API: tenant scope, id fields, pagination, schema documentation."""

from typing import Any, TypeVar

from django.db.models import Model
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import register_converter
from django.views import defaults
from django_filters import FilterSet
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from harness.http.auth import AgentPrincipal
from harness.http.context import context_of
from harness.http.errors import Forbidden
from harness.http.filters import ApiFilterBackend, validated
from harness.http.permissions import AgentApiAccess
from harness.models import Project
from harness.tenancy import EndUserScope, projects_for_user

# PostgreSQL bigint: a larger id cannot name a row, and passing one to a query is a database error.
MAX_ID = 2**63 - 1
MAX_INT = 2**31 - 1


class IdConverter:
    """`<id:pk>`: a positive id that fits a bigint (18 digits), so a giant number answers 404, not 500."""

    regex = "[1-9][0-9]{0,17}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(IdConverter, "id")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: JSON under /api/ (clients parse every 4xx the same way), the HTML page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"code": "not_found", "detail": "No such URL."}, status=404)
    return defaults.page_not_found(request, exception)


def IdField(**kwargs: Any) -> serializers.IntegerField:  # noqa: N802 - reads as a field class
    return serializers.IntegerField(min_value=1, max_value=MAX_ID, **kwargs)


def VersionField(**kwargs: Any) -> serializers.IntegerField:  # noqa: N802 - reads as a field class
    """An `expected_version`: every version column is a PostgreSQL integer, so a larger number is refused 400 here
    rather than reaching a compare-and-set's statement as a database error (500; the schema fuzz found one)."""
    return serializers.IntegerField(min_value=1, max_value=MAX_INT, **kwargs)


def scope(request: Request) -> list[int]:
    """The ids of the projects the caller may read (an agent token's one project, or the user's
    memberships), computed once per request (kept in its context: harness.http.context): every read's
    `project_ids`, as in the console."""
    context = context_of(request)
    if context.scope_ids is None:
        user = request.user
        if isinstance(user, AgentPrincipal):
            context.scope_ids = [user.project.pk]
        else:
            context.scope_ids = list(projects_for_user(user).values_list("pk", flat=True))
    return context.scope_ids


def end_user_scope(request: Request) -> EndUserScope | None:
    """The end user (and session) a narrowed token confines the request to (harness.tokens.narrowed_token_mint);
    None for every other caller. Every read of a view that admits narrowed tokens takes it with `scope`."""
    user = request.user
    if isinstance(user, AgentPrincipal) and user.token.parent_id is not None:
        return EndUserScope(end_user=user.token.end_user, session_id=user.token.scope_session_id,
                            agent_key=user.token.agent_key)
    return None


def agent_project(request: Request) -> Project:
    """The project an agent token writes to (AgentApiAccess already refused other writers)."""
    user = request.user
    if not isinstance(user, AgentPrincipal):
        raise Forbidden("Only agent tokens write through this endpoint.", code="agent_token_required")
    return user.project


class ReachedFirst:
    """A view mixin that admits a token narrowed to one end user (`narrowed_token_allowed`, harness.http.permissions)
    and, on a URL naming an object (`sessions/<pk>/...`, `runs/<pk>/...`), finds that object among the user's before
    the view does anything: the app's `reach` (its `<entity>_reachable` selector) raises NotFoundError otherwise, a
    404 as for another project's (for any other caller `reach` checks nothing: the operation's own statement scopes
    it to the project). An object's end user is set at its creation and never changed, so the answer holds for the
    request. (The schema shows the first docstring along a view's bases as its description: each app's subclass
    keeps its own.)
    """

    narrowed_token_allowed = True

    def reach(self, *, project_ids: list[int], pk: int, end_user: EndUserScope | None) -> None:
        """NotFoundError unless a narrowed caller's `end_user` owns the object `pk` of the view's kind."""
        raise NotImplementedError

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]  # the DRF view it is mixed into
        if "pk" in kwargs:
            self.reach(project_ids=scope(request), pk=kwargs["pk"], end_user=end_user_scope(request))


class AgentApiView(APIView):
    permission_classes = [AgentApiAccess]


class NewestFirstPagination(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200


class SeqPagination(NewestFirstPagination):
    """Items and events in append order; a client follows `next` to tail the log."""

    ordering = "seq"


_M = TypeVar("_M", bound=Model)


class AgentListView(ListAPIView[_M]):
    # A list endpoint: the view's scoped queryset, narrowed by its FilterSet (`filterset_class`). The
    # query string is validated before the view looks anything up, so a bad filter value is a 400 even
    # where the lookup would answer 404 (an unknown run's events). (No docstring: the schema would show
    # it as every list's description.)

    permission_classes = [AgentApiAccess]
    pagination_class = NewestFirstPagination
    filter_backends = [ApiFilterBackend]  # documents the FilterSet's parameters in the schema
    filterset_class: type[FilterSet] | None = None

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        filterset = validated(self.filterset_class(request.query_params)) if self.filterset_class else None
        queryset = self.get_queryset()
        if filterset is not None:
            queryset = filterset.filter_queryset(queryset)
        page = self.paginate_queryset(queryset)
        if page is None:
            return Response(self.get_serializer(queryset, many=True).data)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "harness.http.auth.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {"type": "http", "scheme": "bearer", "description": "An agent or personal token: `Bearer hc_...`."}


_ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "Stable, machine-readable."},
        "detail": {"type": "string"},
        "current_status": {"type": "string"},
        "current_version": {"type": "integer"},
        "fields": {"type": "object", "additionalProperties": True},
        "unknown_fields": {
            "type": "array", "items": {"type": "string"},
            "description": "With `unknown_field`: each field the body names that the operation does not take, as "
                           "a path (`parent_checkpoint`, `items[0].colour`).",
        },
    },
    "required": ["code", "detail"],
    "additionalProperties": True,
}
_ERRORS_ALWAYS = {
    "400": "Invalid input",
    "401": "No valid token or session",
    "403": "The caller's role may not do this",
    "404": "Not found in the caller's projects",
}
_ERRORS_ON_WRITE = {
    "400": "Invalid input (`invalid`, with `fields`), or a field the operation does not take (`unknown_field`, "
           "with `unknown_fields`; a field the server sets, such as id, status or version, included)",
    "409": "Conflict: illegal transition, stale version, lost lease, or a duplicate in progress",
    "413": "Body too large",
    "422": "Idempotency-Key reused with a different request",
}
_IDEMPOTENCY_HEADER = {
    "in": "header",
    "name": "Idempotency-Key",
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 200},
    "description": "Retries with the same key and body get the first 2xx reply; a different body gets 422.",
}


def document_errors_and_idempotency(result: dict[str, Any], generator: Any, request: Any, public: bool
                                    ) -> dict[str, Any]:
    """Spectacular hook: every API operation documents the error shape; every POST the Idempotency-Key; every
    request body's objects are closed (`additionalProperties: false`: harness.http.body refuses another field)."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components["Error"] = _ERROR_SCHEMA
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/v1/"):
            continue
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            errors = dict(_ERRORS_ALWAYS)
            if method != "get":
                errors.update(_ERRORS_ON_WRITE)
            responses = operation.setdefault("responses", {})
            for status, description in errors.items():
                documented = responses.setdefault(status, {"description": description, "content": ref})
                body = documented.setdefault("content", {}).setdefault("application/json", {})
                schema = body.get("schema")
                if schema is None:
                    body["schema"] = ref["application/json"]["schema"]
                elif schema != ref["application/json"]["schema"]:
                    # The view documents its own body for this status; the middleware's errors
                    # (limits, Idempotency-Key) can answer it too, in the common shape.
                    body["schema"] = {"anyOf": [schema, ref["application/json"]["schema"]]}
            if method == "post":
                parameters = operation.setdefault("parameters", [])
                if not any(p.get("name") == "Idempotency-Key" for p in parameters):
                    parameters.append(_IDEMPOTENCY_HEADER)
            _close_objects(operation.get("requestBody", {}), components, set())
    return result


def _close_objects(schema: Any, components: dict[str, Any], seen: set[str]) -> None:
    """Mark every component a request body refers to, nested ones included, as taking no other property. The
    free-form values (a DictField: `additionalProperties: {}`) are inline, not components, and stay open."""
    if isinstance(schema, list):
        for part in schema:
            _close_objects(part, components, seen)
    elif isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            name = ref.rsplit("/", 1)[1]
            component = components.get(name)
            if name not in seen and isinstance(component, dict):
                seen.add(name)
                if component.get("type") == "object" and "properties" in component:
                    component["additionalProperties"] = False
                _close_objects(component, components, seen)
        for value in schema.values():
            _close_objects(value, components, seen)

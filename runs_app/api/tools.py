"""/api/v1/tools/schemas/...: the tool registry (issue 32). An agent declares the JSON Schema of a tool's arguments;
the project's approval requests for that tool are validated against its current version."""

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.api_base import AgentApiView, AgentListView, agent_project, scope
from harness.http.body import InSerializer
from harness.models import Project
from runs_app import services
from runs_app.api.common import validated
from runs_app.filters import ToolSchemaFilter
from runs_app.models import ToolSchema
from runs_app.selectors.tool_schemas import tool_schema_get, tool_schema_list


class ToolSchemaOutSerializer(serializers.ModelSerializer[ToolSchema]):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = ToolSchema
        fields = ["id", "project", "tool", "version", "schema", "schema_digest", "registered_by", "created_at"]
        read_only_fields = fields


class ToolSchemaRegisterInSerializer(InSerializer):
    tool = serializers.CharField(max_length=120)
    schema = serializers.DictField(
        help_text="The JSON Schema of the tool's arguments (draft 2020-12 unless `$schema` names another), "
                  "describing an object. A schema that is not one is refused 400 schema_invalid.")


class ToolSchemaListRegisterApi(AgentListView[ToolSchema]):
    serializer_class = ToolSchemaOutSerializer
    filterset_class = ToolSchemaFilter

    @extend_schema(tags=["tools"], operation_id="tool_schemas_list",
                   description="Every version of the project's tools' schemas, newest first; `tool` narrows to one.")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[ToolSchema]:
        return tool_schema_list(project_ids=scope(self.request))

    @extend_schema(tags=["tools"], operation_id="tool_schemas_register", request=ToolSchemaRegisterInSerializer,
                   responses={200: ToolSchemaOutSerializer, 201: ToolSchemaOutSerializer},
                   description="Declare a tool's argument schema: 201 with the next version, or 200 with the "
                               "current version when the schema is the one it has already (nothing written).")
    def post(self, request: Request) -> Response:
        data = validated(ToolSchemaRegisterInSerializer, request.data)
        registered, created = services.tool_schema_register(
            project=agent_project(request), actor=Actor.of(request.user), **data)
        return Response(ToolSchemaOutSerializer(registered).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class ToolSchemaDetailApi(AgentApiView):
    @extend_schema(tags=["tools"], operation_id="tool_schemas_read", responses={200: ToolSchemaOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(ToolSchemaOutSerializer(tool_schema_get(project_ids=scope(request), schema_id=pk)).data)

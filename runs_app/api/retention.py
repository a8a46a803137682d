"""/api/v1/projects/{id}/retention/: a project's retention policy, and its dry run (runs_app.retention)."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.api_base import MAX_INT, AgentApiView, scope
from harness.http.body import InSerializer
from harness.http.errors import NotFoundError
from harness.http.permissions import OperatorWrites
from harness.models import Project
from runs_app.retention import (
    FIELDS,
    report_as_json,
    retention_policy_of,
    retention_policy_set,
    retention_report,
    retention_settings,
)


def _setting() -> serializers.IntegerField:
    return serializers.IntegerField(min_value=0, max_value=MAX_INT, required=False, allow_null=True, default=None)


# One optional whole number per setting: `<kind>_max_age_days` and `<kind>_keep_last` for every kind.
RetentionInSerializer = type("RetentionInSerializer", (InSerializer,), {name: _setting() for name in FIELDS})


class RetentionOutSerializer(serializers.Serializer[dict[str, Any]]):  # documents the body the views build
    project = serializers.CharField(help_text="The project's slug.")
    enabled = serializers.BooleanField(help_text="False: no setting is given, the project keeps everything.")
    settings = serializers.DictField(child=serializers.IntegerField(allow_null=True),
                                     help_text="Every `<kind>_max_age_days` and `<kind>_keep_last` (null: no limit).")


class RetentionKindSerializer(serializers.Serializer[dict[str, Any]]):
    would_go = serializers.IntegerField(help_text="Rows a pass would remove now.")
    kept = serializers.DictField(child=serializers.IntegerField(),
                                 help_text="Rows the policy lets go that a keep rule keeps, by rule.")


class RetentionDryRunOutSerializer(serializers.Serializer[dict[str, Any]]):
    project = serializers.CharField()
    kinds = serializers.DictField(child=RetentionKindSerializer(),
                                  help_text="By kind: items, events, checkpoints, effects, snapshots, runs; and "
                                            "threads (LangGraph threads past their TTL) where a TTL is set.")


def _readable_project(request: Request, pk: int) -> Project:
    if pk not in scope(request):
        raise NotFoundError("No such project.")
    return Project.objects.get(pk=pk)


def _policy_body(project: Project) -> dict[str, Any]:
    settings = retention_settings(retention_policy_of(project))
    return {"project": project.slug, "enabled": any(v is not None for v in settings.values()), "settings": settings}


class ProjectRetentionApi(AgentApiView):
    permission_classes = [OperatorWrites]  # the policy decides what history goes: a person's, not an agent's

    @extend_schema(tags=["retention"], operation_id="retention_read", responses={200: RetentionOutSerializer},
                   description="The project's retention policy (every setting null: retention is off).")
    def get(self, request: Request, pk: int) -> Response:
        return Response(_policy_body(_readable_project(request, pk)))

    @extend_schema(tags=["retention"], operation_id="retention_set", request=RetentionInSerializer,
                   responses={200: RetentionOutSerializer},
                   description="Replace the policy: a setting left out or null has no limit. What a resume or an "
                               "audit still needs is kept whatever the policy says. An operator of the project "
                               "only (a personal token; an agent token gets 403 not_an_operator). Audited.")
    def put(self, request: Request, pk: int) -> Response:
        project = _readable_project(request, pk)  # another project's id: 404 before any other refusal
        data = RetentionInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        retention_policy_set(project=project, actor=Actor.of(request.user), settings=dict(data.validated_data))
        return Response(_policy_body(project))


class ProjectRetentionDryRunApi(AgentApiView):
    @extend_schema(tags=["retention"], operation_id="retention_dry_run", responses={200: RetentionDryRunOutSerializer},
                   description="What a retention pass would remove now, per kind, and why each row the policy "
                               "lets go is kept (the keep rule). The pass reads the same SQL, so it removes "
                               "exactly `would_go` if nothing changes in between.")
    def get(self, request: Request, pk: int) -> Response:
        project = _readable_project(request, pk)
        return Response({"project": project.slug, "kinds": report_as_json(retention_report(project=project))})

"""/api/v1/runs/...: create, list and read runs; claim, heartbeat, transition; report a model call's usage."""

from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.http.api_base import MAX_ID, AgentApiView, AgentListView, IdField, agent_project, end_user_scope, scope
from harness.http.body import InSerializer
from harness.models import Project
from runs_app import services
from runs_app.api.common import (
    FAILURE_CATEGORY_HELP,
    RunReachable,
    expected_version_field,
    lease_owner_field,
    validated,
)
from runs_app.filters import RunFilter
from runs_app.models import FailureCategory, Run, RunStatus
from runs_app.selectors.runs import run_get, run_list


class RunOutSerializer(serializers.ModelSerializer[Run]):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    # A plain string in the schema: empty when nothing failed (a choice field would leave "" out of its enum).
    failure_category = serializers.CharField(read_only=True, help_text=FAILURE_CATEGORY_HELP)

    class Meta:
        model = Run
        fields = [
            "id", "project", "session", "task", "ref", "task_mode", "status", "active_agent",
            "current_node", "cursor", "deadline", "token_budget", "cost_budget", "tokens_used", "cost_used",
            "pending_approval", "last_checkpoint", "error", "blocked_step", "failure_category", "bound_result",
            "metrics", "version", "lease_owner", "lease_expires_at", "last_event_seq", "created_at", "updated_at",
        ]
        read_only_fields = fields


class RunCreateInSerializer(InSerializer):
    session = IdField()
    task = IdField(required=False, allow_null=True, default=None)
    ref = serializers.CharField(max_length=64, required=False, default="", allow_blank=True)
    task_mode = serializers.CharField(max_length=64, required=False, default="", allow_blank=True)
    active_agent = serializers.CharField(max_length=120, required=False, default="", allow_blank=True)
    cursor = serializers.DictField(required=False, default=dict)
    deadline = serializers.DateTimeField(required=False, allow_null=True, default=None)
    token_budget = serializers.IntegerField(
        min_value=0, max_value=MAX_ID, required=False, allow_null=True, default=None
    )
    cost_budget = serializers.DecimalField(
        max_digits=12, decimal_places=4, min_value=0, required=False, allow_null=True, default=None
    )


class LeaseInSerializer(InSerializer):
    owner = serializers.CharField(max_length=200)
    lease_seconds = serializers.IntegerField(
        min_value=1, max_value=3600, default=settings.HARNESS_DEFAULT_LEASE_SECONDS
    )


class RunTransitionInSerializer(InSerializer):
    to = serializers.ChoiceField(choices=RunStatus.choices)
    expected_version = expected_version_field("run")
    lease_owner = lease_owner_field()
    error = serializers.DictField(required=False, allow_null=True, default=None)
    blocked_step = serializers.CharField(max_length=64, required=False, default="", allow_blank=True)
    failure_category = serializers.ChoiceField(
        choices=FailureCategory.choices, required=False, allow_null=True, default=None,
        help_text="Why the run fails or blocks (seed 000, section 10); a run that goes on clears it.")


class UsageInSerializer(InSerializer):
    tokens = serializers.IntegerField(min_value=0, max_value=services.MAX_TOKENS_PER_CALL,
                                      help_text="The model call's tokens (prompt and completion).")
    cost = serializers.DecimalField(max_digits=12, decimal_places=4, min_value=0,
                                    max_value=services.MAX_COST_PER_CALL, required=False, default=Decimal(0))
    model = serializers.CharField(max_length=120, required=False, default="", allow_blank=True)
    call_id = serializers.CharField(max_length=200, required=False, default="", allow_blank=True,
                                    help_text="The model call's own id, kept in the event for the trace.")
    lease_owner = lease_owner_field()


class RunListCreateApi(AgentListView[Run]):
    serializer_class = RunOutSerializer
    filterset_class = RunFilter

    @extend_schema(tags=["runs"], operation_id="runs_list")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Run]:
        return run_list(project_ids=scope(self.request))

    @extend_schema(tags=["runs"], operation_id="runs_create", request=RunCreateInSerializer,
                   responses={201: RunOutSerializer})
    def post(self, request: Request) -> Response:
        data = validated(RunCreateInSerializer, request.data)
        run = services.run_create(
            project=agent_project(request), session_id=data.pop("session"), task_id=data.pop("task"), **data
        )
        return Response(RunOutSerializer(run).data, status=status.HTTP_201_CREATED)


class RunDetailApi(RunReachable, AgentApiView):
    @extend_schema(tags=["runs"], operation_id="runs_read", responses={200: RunOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        run = run_get(project_ids=scope(request), run_id=pk, end_user=end_user_scope(request))
        return Response(RunOutSerializer(run).data)


class RunClaimApi(AgentApiView):
    @extend_schema(tags=["runs"], operation_id="runs_claim", request=LeaseInSerializer,
                   responses={200: RunOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = validated(LeaseInSerializer, request.data)
        run = services.run_claim(project=agent_project(request), run_id=pk, **data)
        return Response(RunOutSerializer(run).data)


class RunHeartbeatApi(AgentApiView):
    @extend_schema(tags=["runs"], operation_id="runs_heartbeat", request=LeaseInSerializer,
                   responses={200: RunOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = validated(LeaseInSerializer, request.data)
        run = services.run_heartbeat(project=agent_project(request), run_id=pk, **data)
        return Response(RunOutSerializer(run).data)


class RunTransitionApi(AgentApiView):
    @extend_schema(tags=["runs"], operation_id="runs_transition", request=RunTransitionInSerializer,
                   responses={200: RunOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = validated(RunTransitionInSerializer, request.data)
        run = services.run_transition(project=agent_project(request), run_id=pk, **data)
        return Response(RunOutSerializer(run).data)


class RunUsageApi(RunReachable, AgentApiView):
    @extend_schema(
        tags=["runs"], operation_id="runs_usage_report", request=UsageInSerializer, responses={200: RunOutSerializer},
        description="Report one model call's tokens and cost: the run's totals advance atomically. A run that "
                    "reaches its token or cost budget, or is past its deadline, is blocked at `budget` or "
                    "`deadline` by this report (the answer shows it): make no further model or tool call.")
    def post(self, request: Request, pk: int) -> Response:
        data = validated(UsageInSerializer, request.data)
        run = services.run_usage_report(project=agent_project(request), run_id=pk, **data)
        return Response(RunOutSerializer(run).data)

"""/api/v1/standing-approvals/ (issue 33, part 2): "approve and don't ask again" as a reviewer's time-boxed rule.
A person's token with the reviewer role creates and revokes rules (the service the console and the admin call);
an agent's token reads them (what will be approved without asking) but never writes one: 403 `not_a_person`."""

import datetime as dt
from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.api_base import AgentApiView, AgentListView, scope
from harness.http.body import InSerializer
from harness.http.errors import NotFoundError
from harness.http.permissions import ReviewerWrites
from harness.models import Project
from runs_app.api.common import TEXT_MAX, NothingInSerializer, scoped_project, validated
from runs_app.models import StandingApproval
from runs_app.selectors.standing_approvals import standing_approval_get, standing_approval_list
from runs_app.services.standing_approvals import MAX_USES, standing_approval_create, standing_approval_revoke


class StandingApprovalOutSerializer(serializers.ModelSerializer[StandingApproval]):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(slug_field="username",
                                                                                  read_only=True)
    revoked_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = StandingApproval
        fields = ["id", "project", "tool", "created_by", "agent", "session", "run", "match_arguments",
                  "match_schema", "expires_at", "max_uses", "uses", "reason", "revoked_at", "revoked_by",
                  "created_at"]
        read_only_fields = fields


class StandingApprovalCreateInSerializer(InSerializer):
    project = serializers.SlugField(help_text="The project's slug: the caller must review there.")
    tool = serializers.CharField(max_length=120)
    agent = serializers.CharField(max_length=200, required=False, default="", allow_blank=True,
                                  help_text="Only this agent's requests (its token's name); empty: any agent.")
    session = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
    run = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
    match_arguments = serializers.JSONField(required=False, default=dict,
                                            help_text="Argument names and the exact values they must have.")
    match_schema = serializers.JSONField(required=False, allow_null=True, default=None,
                                         help_text="A JSON Schema the arguments must also match.")
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    expires_in = serializers.DurationField(required=False, allow_null=True, default=None,
                                           help_text="Instead of expires_at: how long from now (at most 30 days).")
    max_uses = serializers.IntegerField(min_value=1, max_value=MAX_USES)
    reason = serializers.CharField(max_length=TEXT_MAX, required=False, default="", allow_blank=True)


class StandingApprovalListCreateApi(AgentListView[StandingApproval]):
    serializer_class = StandingApprovalOutSerializer
    permission_classes = [ReviewerWrites]

    @extend_schema(tags=["policies"], operation_id="standing_approvals_list",
                   parameters=[OpenApiParameter("live", bool, description="true: only rules that could approve "
                                                "now; false: only revoked, expired or used up ones."),
                               OpenApiParameter("tool", str)],
                   description="The caller's projects' standing approvals, newest first.")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[StandingApproval]:
        live = self.request.query_params.get("live")
        return standing_approval_list(project_ids=scope(self.request),
                                      live=None if live is None else live.lower() in ("1", "true", "yes"),
                                      tool=self.request.query_params.get("tool", ""))

    @extend_schema(tags=["policies"], operation_id="standing_approvals_create",
                   request=StandingApprovalCreateInSerializer, responses={201: StandingApprovalOutSerializer},
                   description="Create a rule that approves the tool's matching requests until a time, at most "
                               "max_uses times. A person's token with the reviewer role; never for an always-ask "
                               "tool (409 always_ask) or a quorum policy (409 quorum_policy).")
    def post(self, request: Request) -> Response:
        data = validated(StandingApprovalCreateInSerializer, request.data)
        project = scoped_project(request, data.pop("project"))
        expires_in: dt.timedelta | None = data.pop("expires_in")
        rule = standing_approval_create(project=project, actor=Actor.of(request.user), expires_in=expires_in,
                                        session_id=data.pop("session"), run_id=data.pop("run"), **data)
        return Response(StandingApprovalOutSerializer(rule).data, status=status.HTTP_201_CREATED)


class StandingApprovalDetailApi(AgentApiView):
    @extend_schema(tags=["policies"], operation_id="standing_approvals_read",
                   responses={200: StandingApprovalOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        rule = standing_approval_get(project_ids=scope(request), rule_id=pk)
        if rule is None:
            raise NotFoundError(f"Standing approval {pk} does not exist.")
        return Response(StandingApprovalOutSerializer(rule).data)


class StandingApprovalRevokeApi(AgentApiView):
    permission_classes = [ReviewerWrites]

    @extend_schema(tags=["policies"], operation_id="standing_approvals_revoke", request=NothingInSerializer,
                   responses={200: StandingApprovalOutSerializer},
                   description="Revoke the rule at once: it approves nothing more, and an approval it made whose "
                               "run has not resumed yet is asked of a person again. 409 already_revoked.")
    def post(self, request: Request, pk: int) -> Response:
        validated(NothingInSerializer, request.data)
        rule = standing_approval_get(project_ids=scope(request), rule_id=pk)
        if rule is None:
            raise NotFoundError(f"Standing approval {pk} does not exist.")
        revoked = standing_approval_revoke(project=rule.project_id, rule_id=pk, actor=Actor.of(request.user))
        return Response(StandingApprovalOutSerializer(revoked).data)

"""/api/v1/approval-policies/ and /api/v1/reviewer-groups/ (issue 33): read what governs a project's approvals;
a person's token with the operator role publishes a policy's next version (the service the console and the admin
call). An agent's token reads them (an agent may want to know it needs two approvals) but never publishes."""

import datetime as dt
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.api_base import AgentListView, scope
from harness.http.body import InSerializer
from harness.http.permissions import OperatorWrites
from harness.models import Project
from runs_app.api.common import scoped_project, validated
from runs_app.models import ApprovalPolicy, ExpiryAction, ReviewerGroup
from runs_app.selectors.approval_policies import approval_policy_list, reviewer_group_list
from runs_app.services.approval_policies import approval_policy_publish


class ReviewerGroupOutSerializer(serializers.ModelSerializer[ReviewerGroup]):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    members = serializers.SerializerMethodField()

    class Meta:
        model = ReviewerGroup
        fields = ["id", "project", "name", "members", "email_members", "created_at"]
        read_only_fields = fields

    def get_members(self, group: ReviewerGroup) -> list[str]:
        return [member.get_username() for member in group.members.all()]


class ApprovalPolicyOutSerializer(serializers.ModelSerializer[ApprovalPolicy]):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    eligible_groups: serializers.PrimaryKeyRelatedField[ReviewerGroup] = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True)

    class Meta:
        model = ApprovalPolicy
        fields = ["id", "project", "tool", "version", "required_approvals", "eligible_groups", "expires_after",
                  "on_expiry", "escalate_to", "escalation_expires_after", "always_ask", "reject_options",
                  "created_by", "created_at"]
        read_only_fields = fields


class RejectOptionSerializer(serializers.Serializer[dict[str, str]]):
    name = serializers.CharField(max_length=80)
    reviewer_text = serializers.CharField(allow_blank=True, default="")
    agent_text = serializers.CharField(allow_blank=True, default="")


class ApprovalPolicyPublishInSerializer(InSerializer):
    project = serializers.SlugField(help_text="The project's slug: the caller must be an operator there.")
    tool = serializers.CharField(max_length=120, allow_blank=True, default="",
                                 help_text="Empty: the project's default policy.")
    required_approvals = serializers.IntegerField(min_value=1, max_value=20, default=1)
    eligible_groups = serializers.ListField(child=serializers.IntegerField(min_value=1), default=list,
                                            help_text="Reviewer group ids of the project; empty: any reviewer.")
    expires_after = serializers.DurationField(required=False, allow_null=True, default=None)
    on_expiry = serializers.ChoiceField(choices=ExpiryAction.values, default=ExpiryAction.REJECT)
    escalate_to = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
    escalation_expires_after = serializers.DurationField(required=False, allow_null=True, default=None)
    always_ask = serializers.BooleanField(default=False)
    reject_options = RejectOptionSerializer(many=True, default=list)


class ApprovalPolicyListPublishApi(AgentListView[ApprovalPolicy]):
    serializer_class = ApprovalPolicyOutSerializer
    permission_classes = [OperatorWrites]  # a write decides for the agents: a person's, never an agent token's

    @extend_schema(tags=["policies"], operation_id="approval_policies_list",
                   description="Every version of the caller's projects' approval policies, each tool's newest "
                               "first (the tool empty: the project default).")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[ApprovalPolicy]:
        return approval_policy_list(project_ids=scope(self.request)).order_by("-created_at", "-id")

    @extend_schema(tags=["policies"], operation_id="approval_policies_publish",
                   request=ApprovalPolicyPublishInSerializer, responses={201: ApprovalPolicyOutSerializer},
                   description="Publish the next version of a tool's (or the project default's) policy. A person's "
                               "token with the operator role in the project; an agent's is 403 not_an_operator.")
    def post(self, request: Request) -> Response:
        data = validated(ApprovalPolicyPublishInSerializer, request.data)
        project = scoped_project(request, data.pop("project"))
        expires: dt.timedelta | None = data.pop("expires_after")
        published = approval_policy_publish(project=project, actor=Actor.of(request.user), expires_after=expires,
                                            **data)
        return Response(ApprovalPolicyOutSerializer(published).data, status=status.HTTP_201_CREATED)


class ReviewerGroupListApi(AgentListView[ReviewerGroup]):
    serializer_class = ReviewerGroupOutSerializer

    @extend_schema(tags=["policies"], operation_id="reviewer_groups_list",
                   description="The caller's projects' reviewer groups and their members.")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[ReviewerGroup]:
        return reviewer_group_list(project_ids=scope(self.request)).order_by("-created_at", "-id")

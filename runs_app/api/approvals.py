"""/api/v1/approvals/... and runs/{id}/approvals/: request an approval from a run, list and read them, decide one
(a reviewer's door)."""

from typing import Any

from django.contrib.auth.models import User
from django.db.models import Prefetch, QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.api_base import AgentApiView, AgentListView, agent_project, end_user_scope, scope
from harness.http.body import InSerializer
from harness.http.permissions import ReviewerOnly
from harness.models import Project
from runs_app import services
from runs_app.api.common import TEXT_MAX, RunReachable, expected_version_field, lease_owner_field, validated
from runs_app.filters import ApprovalFilter
from runs_app.models import ApprovalExecutor, ApprovalOutcome, ApprovalRequest, ApprovalVote, Risk
from runs_app.policies import reject_option_of
from runs_app.selectors.approvals import approval_get, approval_list

# --- approvals -----------------------------------------------------------------------------------


class VoteOutSerializer(serializers.Serializer[Any]):
    by = serializers.CharField()
    fingerprint = serializers.CharField()
    at = serializers.DateTimeField()


class ApprovalOutSerializer(serializers.ModelSerializer[ApprovalRequest]):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    decided_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True)
    reject_agent_text = serializers.SerializerMethodField(
        help_text="For a rejection with a reject option: the policy's text for the agent, what to do instead.")
    votes = serializers.SerializerMethodField(
        help_text="Under a quorum policy (approvals_required > 1): each reviewer's approval so far, per action "
                  "(fingerprint); the request is approved when approvals_required of them name the same action.")

    class Meta:
        model = ApprovalRequest
        fields = [
            "id", "project", "run", "tool", "arguments", "action_fingerprint", "risk", "idempotency_key", "reason",
            "requested_by", "status", "version", "decided_by", "decided_at", "decision_reason",
            "approved_arguments", "approved_fingerprint", "expires_at", "executor", "arguments_changes", "outcome",
            "outcome_reason", "outcome_at", "tool_schema", "tool_schema_version", "policy", "policy_version",
            "approvals_required", "votes", "reject_option", "reject_agent_text", "standing_approval", "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_reject_agent_text(self, approval: ApprovalRequest) -> str:
        option = reject_option_of(approval)  # reads the policy only for a rejection with an option
        return option["agent_text"] if option else ""

    @extend_schema_field(VoteOutSerializer(many=True))
    def get_votes(self, approval: ApprovalRequest) -> list[dict[str, Any]]:
        # A request of one reviewer has no votes: no query (the decision's answer stays three statements).
        if approval.approvals_required <= 1:
            return []
        # The list prefetches them for its page (one query for all its rows); one approval reads its own.
        return [{"by": vote.user.get_username(), "fingerprint": vote.fingerprint, "at": vote.created_at}
                for vote in (approval.votes.all() if "votes" in getattr(approval, "_prefetched_objects_cache", {})
                             else approval.votes.select_related("user"))]


class ApprovalCreateInSerializer(InSerializer):
    tool = serializers.CharField(max_length=120)
    arguments = serializers.DictField(required=False, default=dict)
    risk = serializers.ChoiceField(choices=Risk.choices, default=Risk.HIGH)
    idempotency_key = serializers.CharField(max_length=200)
    reason = serializers.CharField(max_length=TEXT_MAX, required=False, default="", allow_blank=True)
    expected_version = expected_version_field(
        "run", "the request is fenced on the run's lease (lease_owner), which orders a lease holder's writes, and a "
               "checkpoint write moves the run's version without answering it.")
    lease_owner = lease_owner_field()
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    executor = serializers.ChoiceField(
        choices=ApprovalExecutor.choices, default=ApprovalExecutor.WORKER,
        help_text="Who runs the approved tool: the resume worker (through its tool adapter) or the agent itself "
                  "(the resume binds the decision to the run, releases it, and the agent claims it and goes on).")


class ApprovalDecisionInSerializer(InSerializer):
    decision = serializers.ChoiceField(choices=[services.Decision.APPROVE, services.Decision.REJECT])
    reason = serializers.CharField(max_length=TEXT_MAX, required=False, default="", allow_blank=True)
    edited_arguments = serializers.DictField(required=False, allow_null=True, default=None)
    reject_option = serializers.CharField(
        max_length=80, required=False, default="", allow_blank=True,
        help_text="With a rejection: one of the request's policy's reject options (its `name`); the agent reads "
                  "the option and its text for the agent. Anything else is 400 reject_option_invalid.")
    expected_version = expected_version_field("approval")


class RunApprovalCreateApi(RunReachable, AgentApiView):
    @extend_schema(tags=["approvals"], operation_id="approvals_request", request=ApprovalCreateInSerializer,
                   responses={201: ApprovalOutSerializer},
                   description="Post a pending action; the run moves to waiting_approval and its lease is released, "
                               "in the same transaction.")
    def post(self, request: Request, pk: int) -> Response:
        data = validated(ApprovalCreateInSerializer, request.data)
        approval = services.approval_request_create(
            project=agent_project(request), run_id=pk, actor=Actor.of(request.user), **data,
        )
        return Response(ApprovalOutSerializer(approval).data, status=status.HTTP_201_CREATED)


class ApprovalListApi(AgentListView[ApprovalRequest]):
    serializer_class = ApprovalOutSerializer
    filterset_class = ApprovalFilter
    narrowed_token_allowed = True  # confined to its end user's runs by the selector

    @extend_schema(tags=["approvals"], operation_id="approvals_list")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[ApprovalRequest]:
        return approval_list(project_ids=scope(self.request), end_user=end_user_scope(self.request)).prefetch_related(
            Prefetch("votes", queryset=ApprovalVote.objects.select_related("user").order_by("created_at", "id")))


class ApprovalDetailApi(AgentApiView):
    narrowed_token_allowed = True  # confined to its end user's runs by the selector

    @extend_schema(tags=["approvals"], operation_id="approvals_read", responses={200: ApprovalOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        approval = approval_get(project_ids=scope(request), approval_id=pk,
                                              end_user=end_user_scope(request))
        return Response(ApprovalOutSerializer(approval).data)


class ApprovalDecisionApi(AgentApiView):
    """For console users with the reviewer role (session or personal token); agent tokens get 403."""

    permission_classes = [ReviewerOnly]

    @extend_schema(tags=["approvals"], operation_id="approvals_decide", request=ApprovalDecisionInSerializer,
                   responses={200: ApprovalOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = validated(ApprovalDecisionInSerializer, request.data)
        # Looked up among the caller's projects by the decision's own write: no read before it, and the row
        # it returns (with the reviewer as `decided_by`) is the answer.
        decided = services.approval_decide(project_ids=scope(request), approval_id=pk, actor=Actor.of(request.user),
                                           **data)
        return Response(ApprovalOutSerializer(decided).data)


class ApprovalOutcomeInSerializer(InSerializer):
    outcome = serializers.ChoiceField(choices=[ApprovalOutcome.RAN, ApprovalOutcome.NOT_RUN])
    reason = serializers.CharField(max_length=TEXT_MAX, required=False, default="", allow_blank=True,
                                   help_text="Why the approved action was not run (required with not_run).")
    lease_owner = lease_owner_field()


class ApprovalOutcomeApi(AgentApiView):
    """The agent that runs an approved action itself (executor "agent") says whether it ran it."""

    @extend_schema(tags=["approvals"], operation_id="approvals_report_outcome", request=ApprovalOutcomeInSerializer,
                   responses={200: ApprovalOutSerializer},
                   description="Report once that the approved action ran (`ran`) or was not run (`not_run`, with "
                               "the reason); fenced on the run's lease. The same report again answers the same row; "
                               "another is 409 outcome_reported.")
    def post(self, request: Request, pk: int) -> Response:
        data = validated(ApprovalOutcomeInSerializer, request.data)
        approval = services.approval_report_outcome(project=agent_project(request), approval_id=pk,
                                                    actor=Actor.of(request.user), **data)
        return Response(ApprovalOutSerializer(approval).data)

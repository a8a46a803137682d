"""The agent API for handoffs: issue (from the origin run), list, read, accept, return, cancel.

Thin views over runs_app.services.handoffs: the input serializers name only what a client sets (the packet's
parts, never its fingerprint, status, result hash, receipt or independence), and every read is scoped to the
caller's projects (runs_app.selectors.handoffs).

The issue's answer carries the receiver's credential (`receiver_token`, once). That token calls only the
three views marked `receiver_token_allowed` (read, accept, return), each scoped to its own handoff; every
other operation refuses it (403 `receiver_token_scope`, harness.http.permissions).
"""

from typing import Any

import django_filters
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.api_base import AgentApiView, AgentListView, IdField, agent_project, scope
from harness.http.body import InSerializer
from harness.http.filters import ApiFilter
from harness.http.permissions import receiver_token_id
from harness.models import Project
from runs_app import services
from runs_app.api.common import TEXT_MAX, expected_version_field, lease_owner_field, validated
from runs_app.models import Handoff, HandoffStatus
from runs_app.selectors.handoffs import handoff_get, handoff_list


class HandoffOutSerializer(serializers.ModelSerializer[Handoff]):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Handoff
        fields = [
            "id", "project", "origin_run", "receiver_session", "receiver_run", "packet", "packet_fingerprint",
            "deadline", "status", "version", "issued_by", "accepted_by", "accepted_at", "result", "result_hash",
            "returned_by", "returned_at", "receipt", "consumed_at", "independence", "closed_reason", "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class HandoffIssuedSerializer(HandoffOutSerializer):
    receiver_token = serializers.CharField(
        source="receiver_secret", read_only=True,
        help_text="The receiver's credential, in this answer only: a bearer token that reads this handoff, accepts "
                  "it and returns its result, and nothing else (not the origin's items, events, checkpoints or "
                  "memory). Hand it to the receiving agent instead of a project token; it expires at the deadline.")

    class Meta(HandoffOutSerializer.Meta):
        fields = [*HandoffOutSerializer.Meta.fields, "receiver_token"]
        read_only_fields = fields


class PacketInputSerializer(InSerializer):
    name = serializers.CharField(max_length=120)
    fingerprint = serializers.CharField(max_length=71, help_text="SHA-256 (hex, `sha256:` allowed) of the input.")
    value = serializers.JSONField(required=False, help_text="The input itself; its digest must be the fingerprint.")
    artifact = serializers.CharField(max_length=120, required=False,
                                     help_text="A task artifact of the origin run; its fingerprint must match.")


class HandoffIssueInSerializer(InSerializer):
    receiver_session = IdField()
    objective = serializers.CharField(max_length=TEXT_MAX)
    inputs = PacketInputSerializer(many=True, required=False, default=list)
    allowed_capabilities = serializers.ListField(child=serializers.CharField(max_length=120), max_length=100,
                                                 required=False, default=list)
    output_schema = serializers.DictField(help_text="A JSON Schema (2020-12) the result must match.")
    deadline = serializers.DateTimeField()
    cursor = serializers.DictField(required=False, allow_null=True, default=None,
                                   help_text="The origin's cursor to record in the packet (default: the run's).")
    expected_version = expected_version_field(
        "origin run", "the issue is fenced on the origin run's lease (lease_owner), which orders a lease holder's "
                      "writes, and a checkpoint write moves the run's version without answering it.")
    lease_owner = lease_owner_field()


class HandoffAcceptInSerializer(InSerializer):
    run = IdField(required=False, allow_null=True, default=None,
                  help_text="The receiver's own run (its invocation), in the receiver session; omitted, a new run "
                            "of the receiver session is made for it.")
    expected_version = expected_version_field("handoff")


class HandoffReturnInSerializer(InSerializer):
    packet_fingerprint = serializers.CharField(max_length=64, help_text="The fingerprint of the packet answered.")
    result = serializers.JSONField()
    result_hash = serializers.CharField(max_length=64, required=False, allow_null=True, default=None)
    expected_version = expected_version_field("handoff")


class HandoffCancelInSerializer(InSerializer):
    reason = serializers.CharField(max_length=TEXT_MAX)
    expected_version = expected_version_field("handoff")


class HandoffFilter(django_filters.FilterSet):
    status = ApiFilter(serializers.ChoiceField(choices=HandoffStatus.choices))
    origin_run = ApiFilter(IdField(), field_name="origin_run_id")
    receiver_session = ApiFilter(IdField(), field_name="receiver_session_id")

    class Meta:
        model = Handoff
        fields: list[str] = []


class RunHandoffIssueApi(AgentApiView):
    @extend_schema(tags=["handoffs"], operation_id="handoffs_issue", request=HandoffIssueInSerializer,
                   responses={201: HandoffIssuedSerializer},
                   description="Hand a bounded, blind job to another session: the packet is built, fingerprinted and "
                               "frozen, and the run moves to waiting_external (its lease released) in the same "
                               "transaction. The worker resumes it when the result returns.")
    def post(self, request: Request, pk: int) -> Response:
        data = validated(HandoffIssueInSerializer, request.data)
        handoff = services.handoff_issue(
            project=agent_project(request), origin_run_id=pk, receiver_session_id=data.pop("receiver_session"),
            actor=Actor.of(request.user), **data,
        )
        return Response(HandoffIssuedSerializer(handoff).data, status=status.HTTP_201_CREATED)


class HandoffListApi(AgentListView[Handoff]):
    serializer_class = HandoffOutSerializer
    filterset_class = HandoffFilter

    @extend_schema(tags=["handoffs"], operation_id="handoffs_list")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Handoff]:
        return handoff_list(project_ids=scope(self.request))


def _receivers_own(request: Request, pk: int) -> None:
    """A receiver's token reaches its own handoff only: any other is absent to it (404)."""
    token_id = receiver_token_id(request)
    if token_id is not None:
        handoff_get(project_ids=scope(request), handoff_id=pk, receiver_token_id=token_id)


class HandoffDetailApi(AgentApiView):
    receiver_token_allowed = True

    @extend_schema(tags=["handoffs"], operation_id="handoffs_read", responses={200: HandoffOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        handoff = handoff_get(project_ids=scope(request), handoff_id=pk,
                                        receiver_token_id=receiver_token_id(request))
        return Response(HandoffOutSerializer(handoff).data)


class HandoffAcceptApi(AgentApiView):
    receiver_token_allowed = True

    @extend_schema(tags=["handoffs"], operation_id="handoffs_accept", request=HandoffAcceptInSerializer,
                   responses={200: HandoffOutSerializer},
                   description="The receiver takes the job with its own run; the independence checks are recorded.")
    def post(self, request: Request, pk: int) -> Response:
        data = validated(HandoffAcceptInSerializer, request.data)
        _receivers_own(request, pk)
        handoff = services.handoff_accept(project=agent_project(request), handoff_id=pk, receiver_run_id=data["run"],
                                          actor=Actor.of(request.user), expected_version=data["expected_version"])
        return Response(HandoffOutSerializer(handoff).data)


class HandoffReturnApi(AgentApiView):
    receiver_token_allowed = True

    @extend_schema(tags=["handoffs"], operation_id="handoffs_return", request=HandoffReturnInSerializer,
                   responses={200: HandoffOutSerializer},
                   description="The one result, bound to the packet's fingerprint. Refused (409) for another or an "
                               "altered packet (`packet_mismatch`, `packet_altered`), a second time "
                               "(`result_already_returned`), past the deadline (`handoff_expired`); 400 "
                               "`result_schema_mismatch` when the packet's output schema refuses it.")
    def post(self, request: Request, pk: int) -> Response:
        data = validated(HandoffReturnInSerializer, request.data)
        _receivers_own(request, pk)
        handoff = services.handoff_return(project=agent_project(request), handoff_id=pk,
                                          actor=Actor.of(request.user), **data)
        return Response(HandoffOutSerializer(handoff).data)


class HandoffCancelApi(AgentApiView):
    @extend_schema(tags=["handoffs"], operation_id="handoffs_cancel", request=HandoffCancelInSerializer,
                   responses={200: HandoffOutSerializer},
                   description="Cancel an open handoff (issued or accepted); the origin run goes back to running "
                               "with the cancellation bound.")
    def post(self, request: Request, pk: int) -> Response:
        data = validated(HandoffCancelInSerializer, request.data)
        handoff = services.handoff_cancel(project=agent_project(request), handoff_id=pk,
                                          actor=Actor.of(request.user), **data)
        return Response(HandoffOutSerializer(handoff).data)

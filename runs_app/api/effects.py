"""/api/v1/effects/...: declare an external effect's intent, list and read effects, deliver a result once."""

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.api_base import AgentApiView, AgentListView, IdField, agent_project, scope
from harness.http.body import InSerializer
from runs_app import services
from runs_app.api.common import FAILURE_CATEGORY_HELP, validated
from runs_app.filters import EffectFilter
from runs_app.models import ExternalEffect, Run
from runs_app.selectors.effects import effect_get, effect_list

# --- external effects ----------------------------------------------------------------------------


class EffectOutSerializer(serializers.ModelSerializer[ExternalEffect]):
    failure_category = serializers.CharField(read_only=True, help_text=FAILURE_CATEGORY_HELP)

    class Meta:
        model = ExternalEffect
        fields = [
            "id", "run", "approval", "idempotency_key", "tool", "arguments_digest", "status", "version", "attempts",
            "result", "result_hash", "conflicting_hash", "receipt", "failure_category", "answer", "resolution",
            "retry_authorized", "dispatched_at", "delivered_at", "consumed_at", "created_at", "updated_at",
        ]
        read_only_fields = fields


class EffectIntendInSerializer(InSerializer):
    idempotency_key = serializers.CharField(max_length=200)
    tool = serializers.CharField(max_length=120)
    arguments = serializers.JSONField(required=False, allow_null=True, default=None)
    run = IdField(required=False, allow_null=True, default=None)
    approval = IdField(required=False, allow_null=True, default=None)


class EffectDeliverInSerializer(InSerializer):
    idempotency_key = serializers.CharField(max_length=200)
    result = serializers.JSONField(allow_null=True)
    result_hash = serializers.RegexField(
        r"^[0-9a-f]{64}$", required=False, allow_null=True, default=None,
        help_text="SHA-256 of the result's canonical JSON; the server computes it when omitted.",
    )


class EffectDeliveryOutSerializer(serializers.Serializer[dict[str, Any]]):  # documents the body post() builds
    outcome = serializers.ChoiceField(choices=["consumed", "already_consumed"])
    receipt = serializers.CharField()
    effect = EffectOutSerializer()


class EffectListIntendApi(AgentListView[ExternalEffect]):
    serializer_class = EffectOutSerializer
    filterset_class = EffectFilter

    @extend_schema(tags=["effects"], operation_id="effects_list")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[ExternalEffect]:
        return effect_list(project_ids=scope(self.request))

    @extend_schema(tags=["effects"], operation_id="effects_intend", request=EffectIntendInSerializer,
                   responses={201: EffectOutSerializer, 200: EffectOutSerializer},
                   description="Record the intent; the same key and action again answers 200 with the first record. "
                               "A run that may not act (anything but running: blocked, waiting, not started, "
                               "finished) may not declare an action: 409 run_not_acting with its `run_status`.")
    def post(self, request: Request) -> Response:
        data = validated(EffectIntendInSerializer, request.data)
        effect, created = services.effect_intend(
            project=agent_project(request), idempotency_key=data["idempotency_key"], tool=data["tool"],
            arguments=data["arguments"], run_id=data["run"], approval_id=data["approval"],
            actor=Actor.of(request.user),
        )
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(EffectOutSerializer(effect).data, status=code)


class EffectDetailApi(AgentApiView):
    @extend_schema(tags=["effects"], operation_id="effects_read", responses={200: EffectOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(EffectOutSerializer(effect_get(project_ids=scope(request), effect_id=pk)).data)


class EffectDeliverApi(AgentApiView):
    @extend_schema(
        tags=["effects"], operation_id="effects_deliver", request=EffectDeliverInSerializer,
        responses={200: EffectDeliveryOutSerializer},
        description=(
            "Deliver a result once. The same hash again answers already_consumed with the original receipt; "
            "a different hash is a hard stop: 409 effect_conflict, and the run is blocked. An effect whose outcome "
            "could not be proven (`unknown`) is a person's decision on its page, not a delivery: 403 not_a_person, "
            "and nothing changes."
        ),
    )
    def post(self, request: Request) -> Response:
        data = validated(EffectDeliverInSerializer, request.data)
        delivery = services.effect_deliver(project=agent_project(request), **data)
        effect = delivery.effect
        if delivery.outcome == "conflict":
            # The service has committed the conflict (and blocked the run): answer 409, roll back nothing.
            run_status = (
                Run.objects.filter(pk=effect.run_id).values_list("status", flat=True).first() if effect.run_id else None
            )
            body = {
                "code": "effect_conflict",
                "detail": "A different result was already delivered under this idempotency key.",
                "current_status": effect.status,
                "current_version": effect.version,
                "result_hash": effect.result_hash,
                "conflicting_hash": effect.conflicting_hash,
                "run": effect.run_id,
                "run_status": run_status,
            }
            return Response(body, status=status.HTTP_409_CONFLICT)
        body = {"outcome": delivery.outcome, "receipt": delivery.receipt, "effect": EffectOutSerializer(effect).data}
        return Response(body)

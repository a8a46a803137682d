"""The agent API for webhooks: register (the secret is in this one answer), list, deactivate.

Thin views over notify_app.services; every read is scoped to the caller's projects (notify_app.selectors).
The secret never appears in a list or anywhere else after registration.
"""

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.api_base import AgentApiView, AgentListView, agent_project, scope
from harness.http.body import NO_FIELDS, InSerializer, reject_unknown_fields
from harness.models import Project
from notify_app import selectors, services
from notify_app.models import Webhook, WebhookEvent


class WebhookOutSerializer(serializers.ModelSerializer[Webhook]):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Webhook
        fields = ["id", "project", "url", "events", "active", "created_by", "created_at"]


class WebhookCreatedSerializer(WebhookOutSerializer):
    class Meta(WebhookOutSerializer.Meta):
        fields = [*WebhookOutSerializer.Meta.fields, "secret"]


class WebhookInSerializer(InSerializer):
    url = serializers.URLField(max_length=500, help_text="http(s); receives a signed POST per event.")
    events = serializers.ListField(child=serializers.ChoiceField(choices=WebhookEvent.choices), min_length=1,
                                   max_length=len(WebhookEvent.values))


class WebhookListCreateApi(AgentListView[Webhook]):
    serializer_class = WebhookOutSerializer

    @extend_schema(tags=["webhooks"], operation_id="webhooks_list")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(tags=["webhooks"], operation_id="webhooks_register", request=WebhookInSerializer,
                   responses={201: WebhookCreatedSerializer},
                   description="Register a webhook for `approval.requested`, `approval.decided`, `run.status_changed`. "
                               "The answer holds its `secret`, once: each delivery carries `X-Harness-Timestamp` and "
                               "`X-Harness-Signature: sha256=HMAC-SHA256(secret, \"<timestamp>.\" + body)`.")
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = WebhookInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        webhook = services.webhook_register(project=agent_project(request), actor=Actor.of(request.user),
                                            url=serializer.validated_data["url"],
                                            events=list(serializer.validated_data["events"]))
        return Response(WebhookCreatedSerializer(webhook).data, status=status.HTTP_201_CREATED)

    def get_queryset(self) -> QuerySet[Webhook]:
        return selectors.webhook_list(project_ids=scope(self.request))


class WebhookDeactivateApi(AgentApiView):
    @extend_schema(tags=["webhooks"], operation_id="webhooks_deactivate", request=None,
                   responses={200: WebhookOutSerializer}, description="No more deliveries to it (audited).")
    def post(self, request: Request, pk: int) -> Response:
        reject_unknown_fields(request.data, NO_FIELDS)  # it takes no field: `{}` or no body
        webhook = services.webhook_deactivate(project=agent_project(request), webhook_id=pk,
                                              actor=Actor.of(request.user))
        return Response(WebhookOutSerializer(webhook).data)

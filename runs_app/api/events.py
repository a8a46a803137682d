"""/api/v1/runs/{id}/events/: a run's events, listed by seq and appended under the run's lease."""

from typing import Any

from django.db.models import QuerySet
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.http.api_base import AgentListView, SeqPagination, agent_project, scope
from harness.http.errors import DomainError
from harness.http.idempotency import KeyTaken, claim_of
from runs_app import services
from runs_app.api.common import RenamedInSerializer, lease_owner_field, validated
from runs_app.filters import RunEventFilter
from runs_app.models import RunEvent
from runs_app.selectors.runs import run_event_list

# --- run events ----------------------------------------------------------------------------------


class EventOutSerializer(serializers.ModelSerializer[RunEvent]):
    # `data` is the model's JSONField, read-only as every field here (declared, it would shadow Serializer.data).
    run = serializers.IntegerField(source="run_id", read_only=True)

    class Meta:
        model = RunEvent
        fields = ["id", "run", "seq", "kind", "data", "created_at"]
        read_only_fields = fields


class EventInSerializer(RenamedInSerializer):
    kind = serializers.CharField(max_length=64)
    event_data = serializers.DictField(required=False, default=dict)
    lease_owner = lease_owner_field()
    json_names = {"event_data": "data"}


class RunEventsApi(AgentListView[RunEvent]):
    serializer_class = EventOutSerializer
    claims_idempotency_key = True  # the append records its reply under the key itself (harness.http.idempotency)
    pagination_class = SeqPagination
    filterset_class = RunEventFilter

    @extend_schema(tags=["runs"], operation_id="run_events_list")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[RunEvent]:
        return run_event_list(project_ids=scope(self.request), run_id=self.kwargs["pk"])

    @extend_schema(tags=["runs"], operation_id="run_events_append", request=EventInSerializer,
                   responses={201: EventOutSerializer})
    def post(self, request: Request, pk: int) -> HttpResponse:
        data = validated(EventInSerializer, request.data)
        claim = claim_of(request)
        try:
            event = services.run_event_append(project=agent_project(request), run_id=pk, claim=claim, **data)
        except KeyTaken as taken:
            return taken.claim.answer_repeat()
        except DomainError:
            # A retry of an append that was written (and whose lease has since gone, say) gets the first reply,
            # not the refusal, as the checkpoint write answers it.
            if claim is not None and claim.taken():
                return claim.answer_repeat()
            raise
        return Response(EventOutSerializer(event).data, status=status.HTTP_201_CREATED)

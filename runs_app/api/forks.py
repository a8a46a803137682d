"""/api/v1/checkpoints/{id}/fork/: a new run from a checkpoint (runs_app.services.forks)."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.api_base import AgentApiView, IdField, agent_project
from harness.http.body import InSerializer
from runs_app import services
from runs_app.api.checkpoints import CheckpointOutSerializer, checkpoint_out
from runs_app.api.runs import RunOutSerializer
from runs_app.services.forks import MAX_REASON_CHARS


class ForkInSerializer(InSerializer):
    reason = serializers.CharField(max_length=MAX_REASON_CHARS, help_text="Why: recorded with who and the diff.")
    state = serializers.DictField(required=False, allow_null=True, default=None,
                                  help_text="The edited state (absent: the source checkpoint's state).")
    session = IdField(required=False, allow_null=True, default=None,
                      help_text="A session of the project for the new run (absent: the source run's).")
    new_session = serializers.BooleanField(default=False, help_text="Make a new session like the source run's.")
    ref = serializers.CharField(max_length=64, required=False, default="", allow_blank=True)


class ForkOutSerializer(serializers.Serializer[dict[str, Any]]):  # documents the body post() builds
    run = RunOutSerializer()
    checkpoint = CheckpointOutSerializer()
    diff = serializers.DictField(help_text='{"added": {path: value}, "removed": {...}, "changed": {path: '
                                           '{"from", "to"}}} from the source state to the fork\'s.')


class CheckpointForkApi(AgentApiView):
    @extend_schema(
        tags=["checkpoints"], operation_id="checkpoints_fork", request=ForkInSerializer,
        responses={201: ForkOutSerializer},
        description="Fork a new run from this checkpoint, optionally with edited state, in the same session, "
                    "another one or a new one. The new checkpoint's parent is this one. Same key, same action: "
                    "the stored result is bound; changed arguments need a new key and a new approval.",
    )
    def post(self, request: Request, pk: int) -> Response:
        data = ForkInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        fork = services.checkpoint_fork(
            project=agent_project(request), checkpoint_id=pk, actor=Actor.of(request.user), reason=given["reason"],
            state=given["state"], session_id=given["session"], new_session=given["new_session"], ref=given["ref"],
        )
        body = {"run": RunOutSerializer(fork.run).data, "checkpoint": checkpoint_out(fork.checkpoint),
                "diff": fork.diff}
        return Response(body, status=status.HTTP_201_CREATED)

"""POST /api/v1/memory/erasures/: erase a person (memory_app.erasure) for an admin's personal token; with
`dry_run` the preview. Agent tokens are refused like every operator-only memory operation."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.body import InSerializer
from memory_app.api import OperatorRecordView, _named_project, _validated
from memory_app.erasure import MAX_SUBJECT, person_erase, person_erase_preview


class ErasureInSerializer(InSerializer):
    project = serializers.SlugField()
    subject = serializers.CharField(max_length=MAX_SUBJECT)
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    dry_run = serializers.BooleanField(required=False, default=False)


class ErasureStoreOutSerializer(serializers.Serializer[None]):
    erased = serializers.IntegerField()
    kept = serializers.IntegerField()
    why_kept = serializers.CharField()


class ErasureOutSerializer(serializers.Serializer[None]):
    subject_sha256 = serializers.CharField()
    dry_run = serializers.BooleanField()
    stores = serializers.DictField(child=ErasureStoreOutSerializer())


class PersonErasureView(OperatorRecordView):
    @extend_schema(tags=["memory"], operation_id="memory_person_erase", request=ErasureInSerializer,
                   responses={200: ErasureOutSerializer})
    def post(self, request: Request) -> Response:
        data = _validated(ErasureInSerializer, request.data)
        project = _named_project(request, data["project"])
        actor = Actor.of(request.user)
        if data["dry_run"]:
            report = person_erase_preview(project=project, actor=actor, subject=data["subject"])
        else:
            report = person_erase(project=project, actor=actor, subject=data["subject"], reason=data["reason"])
        return Response(report.as_dict())

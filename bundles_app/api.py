"""The API's doors to bundles (issue 34, part 5), for a person's token (or login session) only:

- POST /api/v1/bundles/export/ {"kind": "run" | "session" | "task", "id": N}: the bundle (an operator of the
  project, or an admin), its export audited;
- POST /api/v1/bundles/import/ {"project": slug, "bundle": {...}}: import it read-only into that project (an
  operator of it; an admin when it must be created).

Agent tokens are refused (403 `not_an_operator`): a bundle carries a whole run's history and audit entries.
"""


from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bundles_app.bundle import ROOT_KINDS, summary
from bundles_app.services import bundle_export, bundle_import, project_of_root
from harness.actors import Actor
from harness.http.api_base import IdField, scope
from harness.http.body import InSerializer
from harness.http.errors import NOT_FINAL_ATTR
from harness.http.permissions import OperatorWrites
from runs_app.api.common import validated


class ExportInSerializer(InSerializer):
    kind = serializers.ChoiceField(choices=ROOT_KINDS)
    id = IdField()


class ImportInSerializer(InSerializer):
    project = serializers.SlugField(max_length=64)
    bundle = serializers.DictField()


class BundleOutSerializer(serializers.Serializer[None]):
    format = serializers.CharField()
    version = serializers.IntegerField()
    manifest = serializers.DictField()
    records = serializers.DictField()
    digest = serializers.CharField()


class ImportedRootSerializer(serializers.Serializer[None]):
    kind = serializers.CharField()
    id = serializers.IntegerField()
    source_id = serializers.IntegerField()


class ImportOutSerializer(serializers.Serializer[None]):
    imported = serializers.IntegerField(help_text="The ImportedBundle's id.")
    project = serializers.CharField()
    root = ImportedRootSerializer()
    summary = serializers.DictField()


class BundleExportView(APIView):
    permission_classes = [OperatorWrites]

    @extend_schema(tags=["bundles"], operation_id="bundle_export", request=ExportInSerializer,
                   responses={200: BundleOutSerializer})
    def post(self, request: Request) -> Response:
        data = validated(ExportInSerializer, request.data)
        project = project_of_root(project_ids=scope(request), kind=data["kind"], root_id=data["id"])
        response = Response(bundle_export(project=project, actor=Actor.of(request.user), kind=data["kind"],
                                          root_id=data["id"]))
        # Never kept as an Idempotency-Key reply: a stored copy of a bundle would outlive an erasure. A retry
        # under the same key exports afresh (harness.http.idempotency releases the key).
        setattr(response, NOT_FINAL_ATTR, True)
        return response


class BundleImportView(APIView):
    permission_classes = [OperatorWrites]

    @extend_schema(tags=["bundles"], operation_id="bundle_import", request=ImportInSerializer,
                   responses={201: ImportOutSerializer})
    def post(self, request: Request) -> Response:
        data = validated(ImportInSerializer, request.data)
        done = bundle_import(bundle=data["bundle"], actor=Actor.of(request.user), project_slug=data["project"])
        imported = done.bundle
        return Response({"imported": imported.pk, "project": imported.project.slug,
                         "root": {"kind": imported.kind, "id": done.root_local_id,
                                  "source_id": imported.root_source_id},
                         "summary": summary(data["bundle"])}, status=201)

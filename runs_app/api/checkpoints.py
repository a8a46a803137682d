"""/api/v1/checkpoints/...: write, list and read checkpoints, and a checkpoint's lineage; the write and the lineage
read have a plain path too (harness.http.plain)."""

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.http.api_base import MAX_ID, MAX_INT, AgentApiView, AgentListView, IdField, agent_project, scope
from harness.http.auth import TokenCheck
from harness.http.body import body_shape
from harness.http.errors import DomainError
from harness.http.idempotency import KeyTaken, claim_of
from harness.http.plain import plain_read, plain_write
from harness.models import Project
from runs_app import services
from runs_app.api.common import RenamedInSerializer, lease_owner_field, validated
from runs_app.filters import CheckpointFilter
from runs_app.models import Checkpoint, ResumePolicy
from runs_app.selectors.checkpoints import checkpoint_get, checkpoint_lineage_json, checkpoint_list

# --- checkpoints ---------------------------------------------------------------------------------


class CheckpointOutSerializer(serializers.ModelSerializer[Checkpoint]):
    class Meta:
        model = Checkpoint
        fields = [
            "id", "run", "task", "parent", "depth", "label", "cursor", "state", "artifact_fingerprints",
            "authority_ref", "pending_gate", "approval", "resume_policy", "schema_version", "content_hash",
            "created_at",
        ]
        read_only_fields = fields


_CREATED_AT = serializers.DateTimeField()


class CheckpointInSerializer(RenamedInSerializer):
    run = IdField(required=False, allow_null=True, default=None)
    task = IdField(required=False, allow_null=True, default=None)
    parent_checkpoint = IdField(required=False, allow_null=True, default=None)
    checkpoint_label = serializers.CharField(max_length=120, required=False, default="", allow_blank=True)
    cursor = serializers.DictField(required=False, default=dict)
    state = serializers.DictField(required=False, default=dict)
    artifact_fingerprints = serializers.DictField(required=False, default=dict)
    authority_ref = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    pending_gate = serializers.JSONField(required=False, allow_null=True, default=None)
    approval = IdField(required=False, allow_null=True, default=None)
    resume_policy = serializers.ChoiceField(choices=ResumePolicy.choices, default=ResumePolicy.REVALIDATE)
    schema_version = serializers.IntegerField(min_value=1, max_value=MAX_INT, default=1)
    lease_owner = lease_owner_field()
    json_names = {"parent_checkpoint": "parent", "checkpoint_label": "label"}


# The checkpoint write's hot path, as the append has one (sessions_app.api): CheckpointInSerializer and
# CheckpointOutSerializer cost about 2 ms of CPU per request, more than the write. A body in the plain
# well-formed shape is checked by hand; anything else goes to the serializer, which accepts or words the
# error exactly as before. tests/api/test_checkpoint_create_fast_path.py holds the two to the same answers.
_CHECKPOINT_IDS = ("run", "task", "parent", "approval")


_CHECKPOINT_DICTS = ("cursor", "state", "artifact_fingerprints")


_CHECKPOINT_TEXTS = (("label", 120), ("authority_ref", 200))


_CHECKPOINT_KEYS = body_shape(CheckpointInSerializer).fields  # another field: the serializer refuses it


_RESUME_POLICIES = frozenset(ResumePolicy.values)


def _plain_text(value: Any, max_length: int) -> bool:
    """A string CharField keeps as it is: no surrounding blanks to trim, no NUL, no lone surrogate."""
    if type(value) is not str or len(value) > max_length or value != value.strip() or "\x00" in value:
        return False
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def checkpoint_create_fast(data: Any) -> dict[str, Any] | None:
    """CheckpointInSerializer's validated_data for a plain well-formed body, or None: ask the serializer."""
    if type(data) is not dict or not _CHECKPOINT_KEYS.issuperset(data):
        return None
    out: dict[str, Any] = {}
    for name in _CHECKPOINT_IDS:
        value = data.get(name)
        if not (value is None or (type(value) is int and 1 <= value <= MAX_ID)):
            return None
        out[name] = value
    for name in _CHECKPOINT_DICTS:
        value = data.get(name, {})
        if type(value) is not dict:
            return None
        out[name] = value
    for name, max_length in _CHECKPOINT_TEXTS:
        value = data.get(name, "")
        if not _plain_text(value, max_length):
            return None
        out[name] = value
    out["pending_gate"] = data.get("pending_gate")
    policy = data.get("resume_policy", ResumePolicy.REVALIDATE.value)
    version = data.get("schema_version", 1)
    owner = data.get("lease_owner")
    if (type(policy) is not str or policy not in _RESUME_POLICIES
            or type(version) is not int or not 1 <= version <= MAX_INT
            or not (owner is None or (_plain_text(owner, 200) and owner))):
        return None
    out["resume_policy"], out["schema_version"], out["lease_owner"] = policy, version, owner
    return out


def checkpoint_out(checkpoint: Checkpoint) -> dict[str, Any]:
    """CheckpointOutSerializer's representation, built directly."""
    c = checkpoint
    return {
        "id": c.pk, "run": c.run_id, "task": c.task_id, "parent": c.parent_id, "depth": c.depth, "label": c.label,
        "cursor": c.cursor, "state": c.state, "artifact_fingerprints": c.artifact_fingerprints,
        "authority_ref": c.authority_ref, "pending_gate": c.pending_gate, "approval": c.approval_id,
        "resume_policy": c.resume_policy, "schema_version": c.schema_version, "content_hash": c.content_hash,
        "created_at": _CREATED_AT.to_representation(c.created_at),
    }


class CheckpointListCreateApi(AgentListView[Checkpoint]):
    serializer_class = CheckpointOutSerializer
    filterset_class = CheckpointFilter
    # The write records its reply under the Idempotency-Key in its own statement (harness.http.idempotency.Claim):
    # one commit per keyed checkpoint instead of three (reserve, write, settle), each an fsync of the WAL.
    claims_idempotency_key = True

    @extend_schema(tags=["checkpoints"], operation_id="checkpoints_list")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Checkpoint]:
        return checkpoint_list(project_ids=scope(self.request))

    @extend_schema(tags=["checkpoints"], operation_id="checkpoints_create", request=CheckpointInSerializer,
                   responses={201: CheckpointOutSerializer})
    def post(self, request: Request) -> HttpResponse:
        data = checkpoint_create_fast(request.data)
        if data is None:
            data = validated(CheckpointInSerializer, request.data)
        body = checkpoint_create_answer(request._request, agent_project(request), data)
        return body if isinstance(body, HttpResponse) else Response(body, status=status.HTTP_201_CREATED)


def checkpoint_create_answer(request: HttpRequest, project: Project, data: dict[str, Any],
                             caller: TokenCheck | None = None) -> dict[str, Any] | HttpResponse:
    """The checkpoint write's 201 body, or the reply already recorded under the request's Idempotency-Key (both
    doors). `data` is CheckpointInSerializer's validated_data."""
    claim = claim_of(request)
    try:
        checkpoint = services.checkpoint_create(
            project=project, run_id=data.pop("run"), task_id=data.pop("task"),
            parent_id=data.pop("parent"), approval_id=data.pop("approval"), claim=claim, caller=caller, **data,
        )
    except KeyTaken as taken:
        return taken.claim.answer_repeat()
    except DomainError:
        # A retry of a checkpoint that was written (and whose lease has since gone, say) gets the first
        # reply, not the refusal: the key is asked before the refusal is explained.
        if claim is not None and claim.taken():
            return claim.answer_repeat()
        raise
    return checkpoint_out(checkpoint)


def checkpoint_create_plain(request: HttpRequest) -> HttpResponse | None:
    """The checkpoint write's plain path (harness.http.plain): None hands the request to CheckpointListCreateApi."""
    return plain_write(request, checkpoint_create_fast, lambda caller, fast: checkpoint_create_answer(
        request, caller.project, fast, caller=caller.check))


class CheckpointDetailApi(AgentApiView):
    @extend_schema(tags=["checkpoints"], operation_id="checkpoints_read", responses={200: CheckpointOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        checkpoint = checkpoint_get(project_ids=scope(request), checkpoint_id=pk)
        return Response(CheckpointOutSerializer(checkpoint).data)


class CheckpointLineageApi(AgentApiView):
    @extend_schema(tags=["checkpoints"], operation_id="checkpoints_lineage",
                   responses={200: CheckpointOutSerializer(many=True)},
                   description="The checkpoint and its ancestors, newest first.")
    def get(self, request: Request, pk: int) -> HttpResponse:
        # PostgreSQL writes the answer (CheckpointOutSerializer's shape); it is sent as it comes.
        body = checkpoint_lineage_json(project_ids=scope(request), checkpoint_id=pk)
        return HttpResponse(body, content_type="application/json")


def checkpoint_lineage_plain(request: HttpRequest, pk: int) -> HttpResponse | None:
    """The lineage read's plain path (harness.http.plain): None hands the request to CheckpointLineageApi."""
    return plain_read(request, lambda caller: checkpoint_lineage_json(
        project_ids=[caller.project.pk], checkpoint_id=pk, caller=caller.check))

"""The agent API for runs, events, checkpoints, approvals, effects and tasks.

One view per operation, each thin: validate an input serializer (which names only what a client may
set, so server-owned fields are never writable, and refuses any other field: harness.http.body), call one
service, render an output serializer.
"""

from decimal import Decimal
from typing import Any, ClassVar

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.api_base import (
    MAX_ID,
    MAX_INT,
    AgentApiView,
    AgentListView,
    IdField,
    SeqPagination,
    agent_project,
    end_user_scope,
    scope,
)
from harness.http.auth import TokenCheck
from harness.http.body import InSerializer, body_shape
from harness.http.errors import DomainError
from harness.http.idempotency import KeyTaken, claim_of
from harness.http.permissions import ReviewerOnly
from harness.http.plain import plain_read, plain_write
from harness.models import Project
from runs_app import services
from runs_app.filters import ApprovalFilter, CheckpointFilter, EffectFilter, RunEventFilter, RunFilter, TaskFilter
from runs_app.models import (
    ApprovalExecutor,
    ApprovalRequest,
    Checkpoint,
    ExternalEffect,
    FailureCategory,
    ResumePolicy,
    Risk,
    Run,
    RunEvent,
    RunStatus,
    Task,
    TaskStatus,
)
from runs_app.selectors import approvals as approvals_sel
from runs_app.selectors import checkpoints as checkpoints_sel
from runs_app.selectors import effects as effects_sel
from runs_app.selectors import runs as runs_sel
from runs_app.selectors import tasks as tasks_sel

_TEXT_MAX = 20_000


def _validated(serializer_class: type[serializers.Serializer[None]], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class _RenamedInSerializer(InSerializer):
    # An input serializer with a field whose JSON name (`data`, `parent`, `label`) is an attribute of
    # Serializer or Field: declared under another Python name, it takes its JSON name here, in its place
    # (`json_names`: Python name -> JSON name). Its source is the JSON name, so validated_data has that key.
    # (No docstring: the schema would show it as the description of every serializer built on it.)

    json_names: ClassVar[dict[str, str]] = {}

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        return {self.json_names.get(name, name): field for name, field in super().get_fields().items()}


# --- runs ----------------------------------------------------------------------------------------


LEASE_OWNER_HELP = (
    "Who writes: the lease owner you claimed the run with, or null (or omitted) if you hold no lease. A run that "
    "holds a lease (claimed and not released, even if it has expired) refuses a write that names no owner or "
    "another one: 409 lease_lost, nothing written. A run with no lease takes a write that names none.")


def lease_owner_field() -> serializers.CharField:
    """The `lease_owner` of every write a lease holder makes to a run (runs_app.fencing)."""
    return serializers.CharField(max_length=200, required=False, allow_null=True, default=None,
                                 help_text=LEASE_OWNER_HELP)


def expected_version_field(what: str, optional_because: str = "") -> serializers.IntegerField:
    """The `expected_version` of a compare-and-set door: required, or optional with the reason in the schema."""
    if not optional_because:
        return IdField(help_text=f"The {what}'s version you read: a stale one is refused 409 version_conflict, "
                                 "nothing written.")
    return IdField(required=False, allow_null=True, default=None,
                   help_text=f"The {what}'s version you read: a stale one is refused 409 version_conflict, nothing "
                             f"written. Optional: {optional_because}")


_FAILURE_CATEGORY_HELP = f"Why it failed or blocked: one of {', '.join(FailureCategory.values)}, or empty."


class RunOutSerializer(serializers.ModelSerializer[Run]):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    # A plain string in the schema: empty when nothing failed (a choice field would leave "" out of its enum).
    failure_category = serializers.CharField(read_only=True, help_text=_FAILURE_CATEGORY_HELP)

    class Meta:
        model = Run
        fields = [
            "id", "project", "session", "task", "ref", "task_mode", "status", "active_agent",
            "current_node", "cursor", "deadline", "token_budget", "cost_budget", "tokens_used", "cost_used",
            "pending_approval", "last_checkpoint", "error", "blocked_step", "failure_category", "bound_result",
            "metrics", "version", "lease_owner", "lease_expires_at", "last_event_seq", "created_at", "updated_at",
        ]
        read_only_fields = fields


class RunCreateInSerializer(InSerializer):
    session = IdField()
    task = IdField(required=False, allow_null=True, default=None)
    ref = serializers.CharField(max_length=64, required=False, default="", allow_blank=True)
    task_mode = serializers.CharField(max_length=64, required=False, default="", allow_blank=True)
    active_agent = serializers.CharField(max_length=120, required=False, default="", allow_blank=True)
    cursor = serializers.DictField(required=False, default=dict)
    deadline = serializers.DateTimeField(required=False, allow_null=True, default=None)
    token_budget = serializers.IntegerField(
        min_value=0, max_value=MAX_ID, required=False, allow_null=True, default=None
    )
    cost_budget = serializers.DecimalField(
        max_digits=12, decimal_places=4, min_value=0, required=False, allow_null=True, default=None
    )


class LeaseInSerializer(InSerializer):
    owner = serializers.CharField(max_length=200)
    lease_seconds = serializers.IntegerField(
        min_value=1, max_value=3600, default=settings.HARNESS_DEFAULT_LEASE_SECONDS
    )


class RunTransitionInSerializer(InSerializer):
    to = serializers.ChoiceField(choices=RunStatus.choices)
    expected_version = expected_version_field("run")
    lease_owner = lease_owner_field()
    error = serializers.DictField(required=False, allow_null=True, default=None)
    blocked_step = serializers.CharField(max_length=64, required=False, default="", allow_blank=True)
    failure_category = serializers.ChoiceField(
        choices=FailureCategory.choices, required=False, allow_null=True, default=None,
        help_text="Why the run fails or blocks (seed 000, section 10); a run that goes on clears it.")


class UsageInSerializer(InSerializer):
    tokens = serializers.IntegerField(min_value=0, max_value=services.MAX_TOKENS_PER_CALL,
                                      help_text="The model call's tokens (prompt and completion).")
    cost = serializers.DecimalField(max_digits=12, decimal_places=4, min_value=0,
                                    max_value=services.MAX_COST_PER_CALL, required=False, default=Decimal(0))
    model = serializers.CharField(max_length=120, required=False, default="", allow_blank=True)
    call_id = serializers.CharField(max_length=200, required=False, default="", allow_blank=True,
                                    help_text="The model call's own id, kept in the event for the trace.")
    lease_owner = lease_owner_field()


# --- the doors a token narrowed to one end user may use (issue 30) --------------------------------------
# A LangGraph graph serving one end user (harness_client.langgraph.HarnessSaver(end_user=...)) reads its thread's
# run, reports its model calls' usage, asks for approvals and reads their decisions. Those views admit a narrowed
# token (`narrowed_token_allowed`, harness.http.permissions) and confine it to the runs of its user's sessions (and its
# one session, when the token names one): another user's run, and its approvals, are absent (404), as another
# project's are. Every other run, checkpoint, effect and task door stays closed to it (403 narrowed_token_scope).


class _RunReachable:
    """Admits a narrowed token and, on `runs/<pk>/...`, finds the run among its user's first (404 otherwise)."""

    narrowed_token_allowed = True

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]  # the DRF view it is mixed into
        if "pk" in kwargs:
            runs_sel.run_reachable(project_ids=scope(request), run_id=kwargs["pk"], end_user=end_user_scope(request))


class RunListCreateApi(AgentListView[Run]):
    serializer_class = RunOutSerializer
    filterset_class = RunFilter

    @extend_schema(tags=["runs"], operation_id="runs_list")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Run]:
        return runs_sel.run_list(project_ids=scope(self.request))

    @extend_schema(tags=["runs"], operation_id="runs_create", request=RunCreateInSerializer,
                   responses={201: RunOutSerializer})
    def post(self, request: Request) -> Response:
        data = _validated(RunCreateInSerializer, request.data)
        run = services.run_create(
            project=agent_project(request), session_id=data.pop("session"), task_id=data.pop("task"), **data
        )
        return Response(RunOutSerializer(run).data, status=status.HTTP_201_CREATED)


class RunDetailApi(_RunReachable, AgentApiView):
    @extend_schema(tags=["runs"], operation_id="runs_read", responses={200: RunOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        run = runs_sel.run_get(project_ids=scope(request), run_id=pk, end_user=end_user_scope(request))
        return Response(RunOutSerializer(run).data)


class RunClaimApi(AgentApiView):
    @extend_schema(tags=["runs"], operation_id="runs_claim", request=LeaseInSerializer,
                   responses={200: RunOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = _validated(LeaseInSerializer, request.data)
        run = services.run_claim(project=agent_project(request), run_id=pk, **data)
        return Response(RunOutSerializer(run).data)


class RunHeartbeatApi(AgentApiView):
    @extend_schema(tags=["runs"], operation_id="runs_heartbeat", request=LeaseInSerializer,
                   responses={200: RunOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = _validated(LeaseInSerializer, request.data)
        run = services.run_heartbeat(project=agent_project(request), run_id=pk, **data)
        return Response(RunOutSerializer(run).data)


class RunTransitionApi(AgentApiView):
    @extend_schema(tags=["runs"], operation_id="runs_transition", request=RunTransitionInSerializer,
                   responses={200: RunOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = _validated(RunTransitionInSerializer, request.data)
        run = services.run_transition(project=agent_project(request), run_id=pk, **data)
        return Response(RunOutSerializer(run).data)


class RunUsageApi(_RunReachable, AgentApiView):
    @extend_schema(
        tags=["runs"], operation_id="runs_usage_report", request=UsageInSerializer, responses={200: RunOutSerializer},
        description="Report one model call's tokens and cost: the run's totals advance atomically. A run that "
                    "reaches its token or cost budget, or is past its deadline, is blocked at `budget` or "
                    "`deadline` by this report (the answer shows it): make no further model or tool call.")
    def post(self, request: Request, pk: int) -> Response:
        data = _validated(UsageInSerializer, request.data)
        run = services.run_usage_report(project=agent_project(request), run_id=pk, **data)
        return Response(RunOutSerializer(run).data)


# --- run events ----------------------------------------------------------------------------------


class EventOutSerializer(serializers.ModelSerializer[RunEvent]):
    # `data` is the model's JSONField, read-only as every field here (declared, it would shadow Serializer.data).
    run = serializers.IntegerField(source="run_id", read_only=True)

    class Meta:
        model = RunEvent
        fields = ["id", "run", "seq", "kind", "data", "created_at"]
        read_only_fields = fields


class EventInSerializer(_RenamedInSerializer):
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
        return runs_sel.run_event_list(project_ids=scope(self.request), run_id=self.kwargs["pk"])

    @extend_schema(tags=["runs"], operation_id="run_events_append", request=EventInSerializer,
                   responses={201: EventOutSerializer})
    def post(self, request: Request, pk: int) -> HttpResponse:
        data = _validated(EventInSerializer, request.data)
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


class CheckpointInSerializer(_RenamedInSerializer):
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
        return checkpoints_sel.checkpoint_list(project_ids=scope(self.request))

    @extend_schema(tags=["checkpoints"], operation_id="checkpoints_create", request=CheckpointInSerializer,
                   responses={201: CheckpointOutSerializer})
    def post(self, request: Request) -> HttpResponse:
        data = checkpoint_create_fast(request.data)
        if data is None:
            data = _validated(CheckpointInSerializer, request.data)
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
        checkpoint = checkpoints_sel.checkpoint_get(project_ids=scope(request), checkpoint_id=pk)
        return Response(CheckpointOutSerializer(checkpoint).data)


class CheckpointLineageApi(AgentApiView):
    @extend_schema(tags=["checkpoints"], operation_id="checkpoints_lineage",
                   responses={200: CheckpointOutSerializer(many=True)},
                   description="The checkpoint and its ancestors, newest first.")
    def get(self, request: Request, pk: int) -> HttpResponse:
        # PostgreSQL writes the answer (CheckpointOutSerializer's shape); it is sent as it comes.
        body = checkpoints_sel.checkpoint_lineage_json(project_ids=scope(request), checkpoint_id=pk)
        return HttpResponse(body, content_type="application/json")


def checkpoint_lineage_plain(request: HttpRequest, pk: int) -> HttpResponse | None:
    """The lineage read's plain path (harness.http.plain): None hands the request to CheckpointLineageApi."""
    return plain_read(request, lambda caller: checkpoints_sel.checkpoint_lineage_json(
        project_ids=[caller.project.pk], checkpoint_id=pk, caller=caller.check))


# --- approvals -----------------------------------------------------------------------------------


class ApprovalOutSerializer(serializers.ModelSerializer[ApprovalRequest]):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    decided_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = ApprovalRequest
        fields = [
            "id", "project", "run", "tool", "arguments", "action_fingerprint", "risk", "idempotency_key", "reason",
            "requested_by", "status", "version", "decided_by", "decided_at", "decision_reason",
            "approved_arguments", "approved_fingerprint", "expires_at", "executor", "created_at", "updated_at",
        ]
        read_only_fields = fields


class ApprovalCreateInSerializer(InSerializer):
    tool = serializers.CharField(max_length=120)
    arguments = serializers.DictField(required=False, default=dict)
    risk = serializers.ChoiceField(choices=Risk.choices, default=Risk.HIGH)
    idempotency_key = serializers.CharField(max_length=200)
    reason = serializers.CharField(max_length=_TEXT_MAX, required=False, default="", allow_blank=True)
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
    reason = serializers.CharField(max_length=_TEXT_MAX, required=False, default="", allow_blank=True)
    edited_arguments = serializers.DictField(required=False, allow_null=True, default=None)
    expected_version = expected_version_field("approval")


class RunApprovalCreateApi(_RunReachable, AgentApiView):
    @extend_schema(tags=["approvals"], operation_id="approvals_request", request=ApprovalCreateInSerializer,
                   responses={201: ApprovalOutSerializer},
                   description="Post a pending action; the run moves to waiting_approval and its lease is released, "
                               "in the same transaction.")
    def post(self, request: Request, pk: int) -> Response:
        data = _validated(ApprovalCreateInSerializer, request.data)
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
        return approvals_sel.approval_list(project_ids=scope(self.request), end_user=end_user_scope(self.request))


class ApprovalDetailApi(AgentApiView):
    narrowed_token_allowed = True  # confined to its end user's runs by the selector

    @extend_schema(tags=["approvals"], operation_id="approvals_read", responses={200: ApprovalOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        approval = approvals_sel.approval_get(project_ids=scope(request), approval_id=pk,
                                              end_user=end_user_scope(request))
        return Response(ApprovalOutSerializer(approval).data)


class ApprovalDecisionApi(AgentApiView):
    """For console users with the reviewer role (session or personal token); agent tokens get 403."""

    permission_classes = [ReviewerOnly]

    @extend_schema(tags=["approvals"], operation_id="approvals_decide", request=ApprovalDecisionInSerializer,
                   responses={200: ApprovalOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = _validated(ApprovalDecisionInSerializer, request.data)
        # Looked up among the caller's projects by the decision's own write: no read before it, and the row
        # it returns (with the reviewer as `decided_by`) is the answer.
        decided = services.approval_decide(project_ids=scope(request), approval_id=pk, actor=Actor.of(request.user),
                                           **data)
        return Response(ApprovalOutSerializer(decided).data)


# --- external effects ----------------------------------------------------------------------------


class EffectOutSerializer(serializers.ModelSerializer[ExternalEffect]):
    failure_category = serializers.CharField(read_only=True, help_text=_FAILURE_CATEGORY_HELP)

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
        return effects_sel.effect_list(project_ids=scope(self.request))

    @extend_schema(tags=["effects"], operation_id="effects_intend", request=EffectIntendInSerializer,
                   responses={201: EffectOutSerializer, 200: EffectOutSerializer},
                   description="Record the intent; the same key and action again answers 200 with the first record. "
                               "A run that may not act (anything but running: blocked, waiting, not started, "
                               "finished) may not declare an action: 409 run_not_acting with its `run_status`.")
    def post(self, request: Request) -> Response:
        data = _validated(EffectIntendInSerializer, request.data)
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
        return Response(EffectOutSerializer(effects_sel.effect_get(project_ids=scope(request), effect_id=pk)).data)


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
        data = _validated(EffectDeliverInSerializer, request.data)
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


# --- tasks ---------------------------------------------------------------------------------------


class TaskOutSerializer(serializers.ModelSerializer[Task]):
    """A task; its `pending_approvals` and `effect_records` are derived from the real rows of its runs
    (selectors.task_durable_state, handed in as the context's `durable`), never written by a client."""

    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    pending_approvals = serializers.SerializerMethodField(
        help_text="The pending approvals of the task's runs (derived from them; read-only).")
    effect_records = serializers.SerializerMethodField(
        help_text="The external effects of the task's runs: key, tool, status, receipt (derived; read-only).")

    def _durable(self, task: Task) -> dict[str, list[dict[str, Any]]]:
        durable: dict[int, dict[str, list[dict[str, Any]]]] = self.context.get("durable") or {}
        if task.pk not in durable:  # one task's (a detail, a save): its two statements, once for both fields
            cached: dict[int, dict[str, list[dict[str, Any]]]] = self.__dict__.setdefault("_durable_one", {})
            if task.pk not in cached:
                cached.update(tasks_sel.task_durable_state([task.pk]))
            return cached[task.pk]
        return durable[task.pk]

    def get_pending_approvals(self, task: Task) -> list[dict[str, Any]]:
        return self._durable(task)["pending_approvals"]

    def get_effect_records(self, task: Task) -> list[dict[str, Any]]:
        return self._durable(task)["effect_records"]

    class Meta:
        model = Task
        fields = [
            "id", "project", "ref", "objective", "constraints", "plan", "plan_version", "completed_nodes",
            "pending_nodes", "artifact_refs", "pending_approvals", "effect_records", "latest_checkpoint",
            "schema_version", "status",
            "version", "created_at", "updated_at",
        ]
        read_only_fields = fields


class TaskFieldsSerializer(InSerializer):
    objective = serializers.CharField(max_length=_TEXT_MAX)
    constraints = serializers.ListField(child=serializers.JSONField(), required=False)
    plan = serializers.ListField(child=serializers.CharField(max_length=120), required=False)
    plan_version = serializers.IntegerField(min_value=1, max_value=MAX_INT, required=False)
    completed_nodes = serializers.ListField(child=serializers.JSONField(), required=False)
    pending_nodes = serializers.ListField(child=serializers.JSONField(), required=False)
    artifact_refs = serializers.DictField(required=False)
    schema_version = serializers.IntegerField(min_value=1, max_value=MAX_INT, required=False)
    # Not pending_approvals nor effect_records: the server derives them (a body naming them: 400 unknown_field).


class TaskCreateInSerializer(TaskFieldsSerializer):
    ref = serializers.CharField(max_length=64, required=False, default="", allow_blank=True)


class TaskSaveInSerializer(TaskFieldsSerializer):
    objective = serializers.CharField(max_length=_TEXT_MAX, required=False)
    expected_version = IdField()


class TaskTransitionInSerializer(InSerializer):
    to = serializers.ChoiceField(choices=TaskStatus.choices)
    expected_version = expected_version_field("task")


class TaskListCreateApi(AgentListView[Task]):
    serializer_class = TaskOutSerializer
    filterset_class = TaskFilter

    @extend_schema(tags=["tasks"], operation_id="tasks_list")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Task]:
        return tasks_sel.task_list(project_ids=scope(self.request))

    def get_serializer(self, *args: Any, **kwargs: Any) -> Any:
        """A page's tasks get their derived state in two statements, not two per task."""
        if kwargs.get("many") and args:
            tasks = list(args[0])
            kwargs["context"] = {**self.get_serializer_context(),
                                 "durable": tasks_sel.task_durable_state([t.pk for t in tasks])}
            args = (tasks, *args[1:])
        return super().get_serializer(*args, **kwargs)

    @extend_schema(tags=["tasks"], operation_id="tasks_create", request=TaskCreateInSerializer,
                   responses={201: TaskOutSerializer})
    def post(self, request: Request) -> Response:
        data = _validated(TaskCreateInSerializer, request.data)
        task = services.task_create(project=agent_project(request), **data)
        return Response(TaskOutSerializer(task).data, status=status.HTTP_201_CREATED)


class TaskDetailApi(AgentApiView):
    @extend_schema(tags=["tasks"], operation_id="tasks_read", responses={200: TaskOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(TaskOutSerializer(tasks_sel.task_get(project_ids=scope(request), task_id=pk)).data)

    @extend_schema(tags=["tasks"], operation_id="tasks_save", request=TaskSaveInSerializer,
                   responses={200: TaskOutSerializer},
                   description="Save the task's durable state: a compare-and-set on expected_version.")
    def patch(self, request: Request, pk: int) -> Response:
        data = _validated(TaskSaveInSerializer, request.data)
        task = services.task_save(project=agent_project(request), task_id=pk, **data)
        return Response(TaskOutSerializer(task).data)


class TaskTransitionApi(AgentApiView):
    @extend_schema(tags=["tasks"], operation_id="tasks_transition", request=TaskTransitionInSerializer,
                   responses={200: TaskOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = _validated(TaskTransitionInSerializer, request.data)
        task = services.task_transition(project=agent_project(request), task_id=pk, **data)
        return Response(TaskOutSerializer(task).data)

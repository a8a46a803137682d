"""The memory API under /api/v1/memory/.

Agents propose writes (the reply says what the policy decided and why), read, retrieve, supersede
what they wrote and ask for a run's context. Operators (console users in the "operator" group, by
login session or personal token) also review held records, expire, delete and erase. One thin view
per operation: validate the input serializer, call one service or selector, render the output.
"""

from typing import Any, TypeVar

from django.db.models import Prefetch, QuerySet
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from harness.actors import Actor
from harness.http.api_base import IdField, NewestFirstPagination, VersionField, end_user_scope, scope
from harness.http.auth import AgentPrincipal
from harness.http.body import InSerializer
from harness.http.errors import Forbidden, NotFoundError, ValidationFailed
from harness.http.filters import ApiFilterBackend, validated
from harness.http.permissions import TokenRole, refuse_receiver_token
from harness.models import Project
from harness.tenancy import Role, user_has_role
from memory_app import context, selectors, services, store_keys
from memory_app.filters import MemoryRecordFilter
from memory_app.models import ContextSnapshot, MemoryRecord, MemoryScope, ProvenanceKind
from memory_app.policy import Outcome
from memory_app.scoping import MemoryCaller
from runs_app.models import Run
from sessions_app.models import Session

_CONTENT_MAX = 100_000  # the policy's max_chars decides; this only bounds what is parsed
_Row = TypeVar("_Row")  # what a queryset yields: GenericAPIView.filter_queryset keeps it

_VERSION_HELP = "The record's version you read: a stale one is refused 409 version_conflict, nothing written."

# --- access --------------------------------------------------------------------------------------


class MemoryAccess(BasePermission):
    """Agent tokens (writers may write; `reader` tokens only read) and operators; nobody else.

    A view with `operators_only = True` refuses agent tokens too.
    """

    def has_permission(self, request: Request, view: APIView) -> bool:
        user = request.user
        if user is None or not user.is_authenticated:
            return False  # 401
        if isinstance(user, AgentPrincipal):
            refuse_receiver_token(request, view)
            if getattr(view, "operators_only", False):
                raise Forbidden("Only operators do this.", code="operator_required")
            if request.method in SAFE_METHODS or user.token.role in TokenRole.WRITERS:
                return True
            raise Forbidden("This token may only read.", code="token_read_only")
        if not user_has_role(user, Role.OPERATOR):
            raise Forbidden("Only operators work with memory.", code="not_an_operator")
        return True


def _projects(request: Request) -> QuerySet[Project]:
    return Project.objects.filter(pk__in=scope(request))


def _named_project(request: Request, slug: str | None) -> Project:
    """An agent acts in its token's project; an operator names one of theirs by slug."""
    user = request.user
    if isinstance(user, AgentPrincipal):
        if slug and slug != user.project.slug:
            raise NotFoundError(f"Project {slug} does not exist.")
        return user.project
    if not slug:
        raise ValidationFailed("Name the project (its slug).", code="project_required")
    project = _projects(request).filter(slug=slug).first()
    if project is None:
        raise NotFoundError(f"Project {slug} does not exist.")
    return project


def _caller(request: Request) -> MemoryCaller | None:
    """The caller's bounds in memory (memory_app.scoping): an agent token's own agent scope, a narrowed token's
    end user; None for a person."""
    user = request.user
    return MemoryCaller.of(user.token) if isinstance(user, AgentPrincipal) else None


def _project_of(request: Request, model: type[MemoryRecord] | type[ContextSnapshot], pk: int) -> int:
    """The project of a record the caller can see; anything else is 404, never 403 (another agent's scope, and
    for a narrowed token another end user's, included)."""
    if model is MemoryRecord:
        records = selectors.visible_records(project_ids=scope(request), caller=_caller(request))
        project_id = records.filter(pk=pk).values_list("project_id", flat=True).first()
    else:
        snapshots = ContextSnapshot.objects.for_projects(scope(request)).filter(pk=pk)
        confined = end_user_scope(request)
        if confined is not None:
            snapshots = snapshots.filter(run__session__in=confined.sessions(Session.objects.all()))
        project_id = snapshots.values_list("project_id", flat=True).first()
    if project_id is None:
        raise NotFoundError(f"{model.__name__} {pk} does not exist.")
    return project_id


def _validated(serializer_class: type[serializers.Serializer[None]], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class MemoryView(APIView):
    permission_classes = [MemoryAccess]
    operators_only = False
    # A token narrowed to an end user reaches memory, confined by memory_app.scoping (the operators' views refuse
    # every agent token anyway).
    narrowed_token_allowed = True


# --- serializers ---------------------------------------------------------------------------------


class ProvenanceSerializer(serializers.Serializer[MemoryRecord]):
    kind = serializers.CharField(source="provenance_kind")
    run = serializers.IntegerField(source="source_run_id", allow_null=True)
    session = serializers.IntegerField(source="source_session_id", allow_null=True)
    item_seq = serializers.IntegerField(source="source_item_seq", allow_null=True)
    person = serializers.SerializerMethodField()
    by = serializers.CharField(source="source_note")

    def get_person(self, record: MemoryRecord) -> str | None:
        return record.source_person.get_username() if record.source_person is not None else None


class MemoryRecordOutSerializer(serializers.ModelSerializer[MemoryRecord]):
    provenance = ProvenanceSerializer(source="*")
    supersedes = serializers.SerializerMethodField()
    fresh = serializers.SerializerMethodField()

    class Meta:
        model = MemoryRecord
        fields = [
            "id", "scope", "scope_key", "subject", "content", "status", "version", "provenance", "created_at",
            "updated_at", "valid_until", "last_confirmed_at", "expires_at", "fresh", "superseded_by", "supersedes",
            "policy_decision", "policy_reason", "deleted_by", "deleted_at", "erased_at",
        ]
        read_only_fields = fields

    def get_supersedes(self, record: MemoryRecord) -> list[int]:
        return sorted(r.pk for r in record.supersedes.all())

    def get_fresh(self, record: MemoryRecord) -> bool:
        return selectors.is_fresh(record)


def _with_links(records: QuerySet[MemoryRecord]) -> QuerySet[MemoryRecord]:
    return records.select_related("source_person").prefetch_related(
        Prefetch("supersedes", queryset=MemoryRecord.objects.only("id", "superseded_by_id"))
    )


def _record_out(project_id: int, record_id: int) -> dict[str, Any]:
    return MemoryRecordOutSerializer(selectors.memory_get(project_ids=[project_id], record_id=record_id)).data


class WriteInSerializer(InSerializer):
    project = serializers.SlugField(required=False, help_text="Operators name the project; agents need not.")
    scope = serializers.ChoiceField(choices=MemoryScope.choices)
    scope_key = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    subject = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    content = serializers.CharField(max_length=_CONTENT_MAX, trim_whitespace=False, allow_blank=True)
    provenance_kind = serializers.ChoiceField(choices=ProvenanceKind.choices, default=ProvenanceKind.OBSERVED)
    source_run_id = IdField(required=False, allow_null=True)
    source_session_id = IdField(required=False, allow_null=True)
    source_item_seq = IdField(required=False, allow_null=True)
    valid_until = serializers.DateTimeField(required=False, allow_null=True)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)


class WriteOutSerializer(serializers.Serializer[dict[str, Any]]):
    outcome = serializers.ChoiceField(choices=[Outcome.ACCEPTED, Outcome.MERGED, Outcome.HELD, Outcome.REJECTED])
    code = serializers.CharField()
    reason = serializers.CharField()
    record = MemoryRecordOutSerializer(allow_null=True)
    conflicts = serializers.ListField(child=serializers.IntegerField())


class RetrieveFilterSerializer(serializers.Serializer[None]):
    project = serializers.SlugField(required=False)
    scope = serializers.ChoiceField(choices=MemoryScope.choices)
    scope_key = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    q = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
    k = serializers.IntegerField(required=False, default=10, min_value=1, max_value=selectors.MAX_K)


# Optional in the schema so that a missing reason is the service's 400 `reason_required`, the same answer every
# door gives, rather than a serializer's generic one.
_REASON_HELP = "Why: required for a person, recorded in the audit entry."


class SupersedeInSerializer(InSerializer):
    content = serializers.CharField(required=False, max_length=_CONTENT_MAX, trim_whitespace=False, allow_blank=True)
    replacement_id = IdField(required=False, help_text="Resolve a conflict: this live record stands instead.")
    subject = serializers.CharField(required=False, allow_blank=True, max_length=200)
    provenance_kind = serializers.ChoiceField(choices=ProvenanceKind.choices, required=False)
    source_run_id = IdField(required=False, allow_null=True)
    source_session_id = IdField(required=False, allow_null=True)
    source_item_seq = IdField(required=False, allow_null=True)
    valid_until = serializers.DateTimeField(required=False, allow_null=True)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)
    expected_version = VersionField(help_text=_VERSION_HELP)
    reason = serializers.CharField(required=False, allow_blank=True, max_length=services.REASON_MAX,
                                   help_text=_REASON_HELP + " Agents editing what they wrote may leave it out.")


class VersionInSerializer(InSerializer):
    expected_version = VersionField(help_text=_VERSION_HELP)


class ReviewInSerializer(VersionInSerializer):
    decision = serializers.ChoiceField(choices=["approve", "reject"])


class ExpireInSerializer(VersionInSerializer):
    at = serializers.DateTimeField(required=False, help_text="When it expires; now by default.")


class EraseInSerializer(InSerializer):
    include_history = serializers.BooleanField(default=True, help_text="Also erase the versions it replaced.")


class DeleteInSerializer(VersionInSerializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=services.REASON_MAX,
                                   help_text=_REASON_HELP)


class BulkInSerializer(InSerializer):
    project = serializers.SlugField()
    ids = serializers.ListField(child=IdField(), min_length=1, max_length=services.MAX_BULK)


class BulkDeleteInSerializer(BulkInSerializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=services.REASON_MAX,
                                   help_text=_REASON_HELP)


class BulkOutSerializer(serializers.Serializer[dict[str, Any]]):
    done = serializers.ListField(child=serializers.IntegerField())
    failed = serializers.DictField(child=serializers.CharField())


class ChainOutSerializer(serializers.Serializer[dict[str, Any]]):
    record = serializers.IntegerField()
    before = serializers.ListField(child=serializers.IntegerField(), help_text="Older versions, oldest first.")
    after = serializers.ListField(child=serializers.IntegerField(), help_text="Newer versions, newest last.")
    versions = MemoryRecordOutSerializer(many=True)


class ConflictOutSerializer(serializers.Serializer[selectors.Conflict]):
    scope = serializers.CharField()
    scope_key = serializers.CharField()
    subject = serializers.CharField()
    records = MemoryRecordOutSerializer(many=True)


class ProjectFilterSerializer(serializers.Serializer[None]):
    project = serializers.SlugField(required=False)


class ContextInSerializer(InSerializer):
    run_id = IdField()
    # Without one, the run's session's own `context_budget_chars`.
    budget_chars = serializers.IntegerField(min_value=1, max_value=context.MAX_BUDGET_CHARS, required=False,
                                            allow_null=True, default=None)
    query = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)


class ContextOutSerializer(serializers.ModelSerializer[ContextSnapshot]):
    class Meta:
        model = ContextSnapshot
        fields = ["id", "run", "item_seqs", "memory_ids", "query", "budget_chars", "used_chars", "content",
                  "manifest", "created_at"]
        read_only_fields = fields


_ERROR = inline_serializer("MemoryPolicyRejection", fields={
    "code": serializers.CharField(), "detail": serializers.CharField(),
    "outcome": serializers.CharField(), "reason": serializers.CharField(),
})

# --- records -------------------------------------------------------------------------------------


class RecordListView(ListAPIView[MemoryRecord]):
    """GET lists a project's records in every status (filters); POST proposes a write."""

    permission_classes = [MemoryAccess]
    narrowed_token_allowed = True
    pagination_class = NewestFirstPagination
    serializer_class = MemoryRecordOutSerializer
    filter_backends = [ApiFilterBackend]  # documents the FilterSet's parameters in the schema
    filterset_class = MemoryRecordFilter

    def get_queryset(self) -> QuerySet[MemoryRecord]:
        # The query string first (a bad value is a 400), then the project it names, then its records.
        filters = validated(self.filterset_class(self.request.query_params))
        project = _named_project(self.request, filters.form.cleaned_data.get("project"))
        records = selectors.memory_list(project_ids=[project.pk], caller=_caller(self.request))
        return _with_links(filters.filter_queryset(records))

    def filter_queryset(self, queryset: QuerySet[MemoryRecord, _Row]) -> QuerySet[MemoryRecord, _Row]:
        return queryset  # filtered in get_queryset, once the project is known

    @extend_schema(tags=["memory"], operation_id="memory_records_list")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        tags=["memory"], operation_id="memory_records_write", request=WriteInSerializer,
        responses={201: WriteOutSerializer, 200: WriteOutSerializer, 422: _ERROR},
        description="201 accepted or held, 200 merged into an existing record, 422 rejected by the policy.",
    )
    def post(self, request: Request) -> Response:
        data = _validated(WriteInSerializer, request.data)
        project = _named_project(request, data.pop("project", None))
        result = services.memory_write(project=project, actor=Actor.of(request.user), **data)
        if result.record is None:  # rejected by the policy: nothing was stored
            body = {"code": result.code, "detail": result.reason, "outcome": result.outcome, "reason": result.reason}
            return Response(body, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        out = {
            "outcome": result.outcome, "code": result.code, "reason": result.reason,
            "record": _record_out(project.pk, result.record.pk), "conflicts": result.conflicts,
        }
        code = status.HTTP_200_OK if result.outcome == Outcome.MERGED else status.HTTP_201_CREATED
        return Response(out, status=code)


class RecordDetailView(MemoryView):
    @extend_schema(tags=["memory"], operation_id="memory_records_read", responses={200: MemoryRecordOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(_record_out(_project_of(request, MemoryRecord, pk), pk))


class RecordChainView(MemoryView):
    @extend_schema(tags=["memory"], operation_id="memory_records_chain", responses={200: ChainOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        chain = selectors.memory_chain(project=_project_of(request, MemoryRecord, pk), record_id=pk)
        return Response(ChainOutSerializer({
            "record": pk, "before": [r.pk for r in chain.before], "after": [r.pk for r in chain.after],
            "versions": chain.versions,
        }).data)


class RecordSupersedeView(MemoryView):
    @extend_schema(
        tags=["memory"], operation_id="memory_records_supersede", request=SupersedeInSerializer,
        responses={201: MemoryRecordOutSerializer},
        description="Give `content` for a new version, or `replacement_id` to let another live record stand "
                    "(resolving a conflict). Agents supersede only what they wrote. Returns the standing record.",
    )
    def post(self, request: Request, pk: int) -> Response:
        data = _validated(SupersedeInSerializer, request.data)
        project_id = _project_of(request, MemoryRecord, pk)
        standing = services.memory_supersede(project=project_id, actor=Actor.of(request.user), record_id=pk, **data)
        return Response(_record_out(project_id, standing.pk), status=status.HTTP_201_CREATED)


class OperatorRecordView(MemoryView):
    operators_only = True


class RecordReviewView(OperatorRecordView):
    @extend_schema(tags=["memory"], operation_id="memory_records_review", request=ReviewInSerializer,
                   responses={200: MemoryRecordOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = _validated(ReviewInSerializer, request.data)
        project_id = _project_of(request, MemoryRecord, pk)
        services.memory_review(project=project_id, actor=Actor.of(request.user), record_id=pk,
                               approve=data["decision"] == "approve", expected_version=data["expected_version"])
        return Response(_record_out(project_id, pk))


class RecordExpireView(OperatorRecordView):
    @extend_schema(tags=["memory"], operation_id="memory_records_expire", request=ExpireInSerializer,
                   responses={200: MemoryRecordOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = _validated(ExpireInSerializer, request.data)
        project_id = _project_of(request, MemoryRecord, pk)
        services.memory_expire(project=project_id, actor=Actor.of(request.user), record_id=pk, at=data.get("at"),
                               expected_version=data["expected_version"])
        return Response(_record_out(project_id, pk))


class RecordDeleteView(OperatorRecordView):
    @extend_schema(tags=["memory"], operation_id="memory_records_delete", request=DeleteInSerializer,
                   responses={200: MemoryRecordOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = _validated(DeleteInSerializer, request.data)
        project_id = _project_of(request, MemoryRecord, pk)
        services.memory_delete(project=project_id, actor=Actor.of(request.user), record_id=pk,
                               expected_version=data["expected_version"], reason=data.get("reason", ""))
        return Response(_record_out(project_id, pk))


class RecordEraseView(OperatorRecordView):
    @extend_schema(tags=["memory"], operation_id="memory_records_erase", request=EraseInSerializer,
                   responses={200: inline_serializer("MemoryErased", fields={
                       "erased": serializers.ListField(child=serializers.IntegerField())})})
    def post(self, request: Request, pk: int) -> Response:
        data = _validated(EraseInSerializer, request.data)
        project_id = _project_of(request, MemoryRecord, pk)
        erased = services.memory_erase(project=project_id, actor=Actor.of(request.user), record_id=pk, **data)
        return Response({"erased": erased})


class BulkDeleteView(OperatorRecordView):
    @extend_schema(tags=["memory"], operation_id="memory_records_bulk_delete", request=BulkDeleteInSerializer,
                   responses={200: BulkOutSerializer})
    def post(self, request: Request) -> Response:
        data = _validated(BulkDeleteInSerializer, request.data)
        project = _named_project(request, data["project"])
        result = services.memory_bulk_delete(project=project, actor=Actor.of(request.user), record_ids=data["ids"],
                                             reason=data.get("reason", ""))
        return Response(BulkOutSerializer({"done": result.done, "failed": result.failed}).data)


class BulkExpireView(OperatorRecordView):
    @extend_schema(tags=["memory"], operation_id="memory_records_bulk_expire", request=BulkInSerializer,
                   responses={200: BulkOutSerializer})
    def post(self, request: Request) -> Response:
        data = _validated(BulkInSerializer, request.data)
        project = _named_project(request, data["project"])
        result = services.memory_bulk_expire(project=project, actor=Actor.of(request.user), record_ids=data["ids"])
        return Response(BulkOutSerializer({"done": result.done, "failed": result.failed}).data)


# --- retrieval, review queue, conflicts, context -----------------------------------------------


class RetrieveView(MemoryView):
    @extend_schema(
        tags=["memory"], operation_id="memory_retrieve", parameters=[RetrieveFilterSerializer],
        responses={200: MemoryRecordOutSerializer(many=True)},
        description="Active, fresh records of one scope; `q` is a full-text query (websearch syntax); top `k`.",
    )
    def get(self, request: Request) -> Response:
        filters = _validated(RetrieveFilterSerializer, request.query_params)
        project = _named_project(request, filters.pop("project", None))
        caller, scope_key = _caller(request), filters["scope_key"]
        if caller is not None:  # the caller's own agent scope and, narrowed, its end user's scopes only
            scope_key = caller.read_key(project.pk, filters["scope"], scope_key)
        found = selectors.memory_retrieve(project=project, scope=filters["scope"], scope_key=scope_key,
                                          query=filters["q"], k=filters["k"])
        return Response(MemoryRecordOutSerializer(found, many=True).data)


class HeldListView(ListAPIView[MemoryRecord]):
    permission_classes = [MemoryAccess]
    operators_only = True
    pagination_class = NewestFirstPagination
    serializer_class = MemoryRecordOutSerializer

    def get_queryset(self) -> QuerySet[MemoryRecord]:
        filters = _validated(ProjectFilterSerializer, self.request.query_params)
        project = _named_project(self.request, filters.get("project"))
        return _with_links(selectors.memory_held(project_ids=[project.pk]))

    @extend_schema(tags=["memory"], operation_id="memory_held_list", parameters=[ProjectFilterSerializer])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class ConflictListView(MemoryView):
    @extend_schema(tags=["memory"], operation_id="memory_conflicts_list", parameters=[ProjectFilterSerializer],
                   responses={200: ConflictOutSerializer(many=True)})
    def get(self, request: Request) -> Response:
        filters = _validated(ProjectFilterSerializer, request.query_params)
        conflicts = selectors.memory_conflicts(project=_named_project(request, filters.get("project")),
                                               caller=_caller(request))
        # The stubs give a plain Serializer no many=True signature taking a list (ModelSerializer's has one).
        return Response(ConflictOutSerializer(conflicts, many=True).data)  # type: ignore[arg-type]


class ContextCreateView(MemoryView):
    @extend_schema(
        tags=["memory"], operation_id="memory_context_create", request=ContextInSerializer,
        responses={201: ContextOutSerializer},
        description="Build and record the context for a run under its session's memory policy and role (none: "
                    "the run's own items; bounded: the newest items within the item limit; session: the session's "
                    "items; external: the run's own items and memory retrieved for `query`; checkpoint_only: the "
                    "latest checkpoint's state), plus the packet of a handoff the run received, within the budget "
                    "(default: the session's). The snapshot is exactly what the model is given; its `manifest` "
                    "names the rule that admitted each part and what was left out.",
    )
    def post(self, request: Request) -> Response:
        data = _validated(ContextInSerializer, request.data)
        runs = Run.objects.filter(project_id__in=scope(request), pk=data["run_id"])
        confined = end_user_scope(request)
        if confined is not None:  # a narrowed token: a run of its end user's sessions only
            runs = runs.filter(session__in=confined.sessions(Session.objects.all()))
        project_id = runs.values_list("project_id", flat=True).first()
        if project_id is None:
            raise NotFoundError(f"Run {data['run_id']} does not exist.")
        snapshot = context.context_project(project=project_id, run_id=data["run_id"],
                                            budget_chars=data["budget_chars"], query=data["query"])
        return Response(ContextOutSerializer(snapshot).data, status=status.HTTP_201_CREATED)


class ContextDetailView(MemoryView):
    @extend_schema(tags=["memory"], operation_id="memory_context_read", responses={200: ContextOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        project_id = _project_of(request, ContextSnapshot, pk)
        return Response(ContextOutSerializer(selectors.context_snapshot_get(project=project_id, snapshot_id=pk)).data)



# --- the LangGraph store (harness_client.langgraph_store): one view per store operation ---------------------------

_NAMESPACE_HELP = ("The LangGraph namespace: its scope first (`project`, `user`, `agent`, `session`), then (but for "
                   "`project`) the scope key, then labels of your own.")


def _labels(required: bool = True, help_text: str = _NAMESPACE_HELP) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=200, trim_whitespace=False), max_length=store_keys.MAX_DEPTH,
        required=required, default=list if not required else serializers.empty, help_text=help_text)


class StoreGraphSerializer(InSerializer):
    thread_id = serializers.CharField(required=False, allow_blank=True, max_length=1000, trim_whitespace=False)
    checkpoint_ns = serializers.CharField(required=False, allow_blank=True, max_length=1000, trim_whitespace=False)
    checkpoint_id = serializers.CharField(required=False, allow_blank=True, max_length=1000, trim_whitespace=False)
    node = serializers.CharField(required=False, allow_blank=True, max_length=1000, trim_whitespace=False)


class StorePutInSerializer(InSerializer):
    project = serializers.SlugField(required=False, help_text="Operators name the project; agents need not.")
    namespace = _labels()
    key = serializers.CharField(max_length=200, trim_whitespace=False)
    value = serializers.DictField(help_text="The item's value, a JSON object.")
    ttl_seconds = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                           max_value=services.MAX_TTL_SECONDS,
                                           help_text="Expires this long after the put (a refreshing read renews it).")
    graph = StoreGraphSerializer(required=False, help_text="Where in a LangGraph graph the put was made: the "
                                 "thread's run (if it is this project's) becomes the source run.")
    source_run_id = IdField(required=False, allow_null=True)
    source_session_id = IdField(required=False, allow_null=True)


class StoreKeyInSerializer(InSerializer):
    project = serializers.SlugField(required=False)
    namespace = _labels()
    key = serializers.CharField(max_length=200, trim_whitespace=False)


class StoreGetFilterSerializer(serializers.Serializer[None]):
    project = serializers.SlugField(required=False)
    namespace = _labels()
    key = serializers.CharField(max_length=200, trim_whitespace=False)
    refresh_ttl = serializers.BooleanField(required=False, default=False,
                                           help_text="Renew the item's TTL (now + its ttl) as it is read.")


class StoreSearchFilterSerializer(serializers.Serializer[None]):
    project = serializers.SlugField(required=False)
    namespace_prefix = _labels(required=False, help_text="Items whose namespace starts with these labels.")
    query = serializers.CharField(required=False, allow_blank=True, default="", max_length=500,
                                  help_text="Full text (websearch syntax) over the value's JSON text.")
    filter = serializers.JSONField(required=False, default=dict,
                                   help_text='JSON: {"field": value} or {"field": {"$gt": 3}} on value fields.')
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=selectors.MAX_STORE_LIMIT)
    offset = serializers.IntegerField(required=False, default=0, min_value=0)
    refresh_ttl = serializers.BooleanField(required=False, default=False)


class StoreNamespacesFilterSerializer(serializers.Serializer[None]):
    project = serializers.SlugField(required=False)
    prefix = _labels(required=False, help_text='Namespaces starting with these labels ("*": any one).')
    suffix = _labels(required=False, help_text='Namespaces ending with these labels ("*": any one).')
    max_depth = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1)
    limit = serializers.IntegerField(required=False, default=100, min_value=1, max_value=selectors.MAX_STORE_LIMIT)
    offset = serializers.IntegerField(required=False, default=0, min_value=0)


class StoreProvenanceSerializer(ProvenanceSerializer):
    graph = serializers.JSONField(source="source_graph")


class StoreItemOutSerializer(serializers.ModelSerializer[MemoryRecord]):
    provenance = StoreProvenanceSerializer(source="*")
    score = serializers.SerializerMethodField()

    class Meta:
        model = MemoryRecord
        fields = ["id", "namespace", "key", "value", "scope", "scope_key", "status", "version", "created_at",
                  "updated_at", "expires_at", "ttl_seconds", "provenance", "policy_decision", "policy_reason",
                  "superseded_by", "score"]
        read_only_fields = fields

    def get_score(self, record: MemoryRecord) -> float | None:
        rank = getattr(record, "rank", None)
        return float(rank) if rank is not None else None


class StorePutOutSerializer(serializers.Serializer[dict[str, Any]]):
    outcome = serializers.ChoiceField(choices=[Outcome.ACCEPTED, Outcome.MERGED, Outcome.HELD])
    code = serializers.CharField()
    reason = serializers.CharField()
    record = StoreItemOutSerializer()


class StoreItemsView(MemoryView):
    @extend_schema(tags=["memory"], operation_id="memory_store_get", parameters=[StoreGetFilterSerializer],
                   responses={200: StoreItemOutSerializer},
                   description="The active, fresh item under (namespace, key); 404 when there is none.")
    def get(self, request: Request) -> Response:
        filters = _validated(StoreGetFilterSerializer, request.query_params)
        project = _named_project(request, filters.get("project"))
        where = store_keys.namespace_of(filters["namespace"])
        record = selectors.store_get(project=project, caller=_caller(request), namespace=where.labels,
                                     key=store_keys.key_of(filters["key"]))
        if record is None:
            raise NotFoundError("No item under that namespace and key.")
        if filters["refresh_ttl"] and record.ttl_seconds is not None:
            services.memory_ttl_refresh(project=project, record_ids=[record.pk])
            record.refresh_from_db()
        return Response(StoreItemOutSerializer(record).data)

    @extend_schema(
        tags=["memory"], operation_id="memory_store_put", request=StorePutInSerializer,
        responses={201: StorePutOutSerializer, 200: StorePutOutSerializer, 422: _ERROR},
        description="Put a value under (namespace, key) through the scope's write policy: 201 accepted (a new "
                    "value supersedes the key's old one, which stays in its chain) or held for review (the old "
                    "value stands until an operator approves), 200 the same value confirmed, 422 rejected.",
    )
    def post(self, request: Request) -> Response:
        data = _validated(StorePutInSerializer, request.data)
        project = _named_project(request, data.pop("project", None))
        result = services.memory_put(project=project, actor=Actor.of(request.user), **data)
        if result.record is None:
            body = {"code": result.code, "detail": result.reason, "outcome": result.outcome, "reason": result.reason}
            return Response(body, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        record = selectors.memory_get(project_ids=[project.pk], record_id=result.record.pk)
        out = {"outcome": result.outcome, "code": result.code, "reason": result.reason,
               "record": StoreItemOutSerializer(record).data}
        code = status.HTTP_200_OK if result.outcome == Outcome.MERGED else status.HTTP_201_CREATED
        return Response(out, status=code)


class StoreDeleteView(MemoryView):
    @extend_schema(tags=["memory"], operation_id="memory_store_delete", request=StoreKeyInSerializer,
                   responses={200: inline_serializer("MemoryStoreDeleted", fields={
                       "deleted": serializers.ListField(child=serializers.IntegerField())})},
                   description="Tombstone the key's live records (erasure scrubs them later); none for an "
                               "absent key.")
    def post(self, request: Request) -> Response:
        data = _validated(StoreKeyInSerializer, request.data)
        project = _named_project(request, data.pop("project", None))
        deleted = services.memory_key_delete(project=project, actor=Actor.of(request.user), **data)
        return Response({"deleted": deleted})


class StoreSearchView(MemoryView):
    @extend_schema(tags=["memory"], operation_id="memory_store_search", parameters=[StoreSearchFilterSerializer],
                   responses={200: StoreItemOutSerializer(many=True)},
                   description="Active, fresh items under a namespace prefix, filtered on value fields; `query` "
                               "is full text (no embeddings), best first; else newest first. One page.")
    def get(self, request: Request) -> Response:
        filters = _validated(StoreSearchFilterSerializer, request.query_params)
        project = _named_project(request, filters.get("project"))
        if not isinstance(filters["filter"], dict):
            raise ValidationFailed("filter is a JSON object.", code="invalid_filter")
        found = selectors.store_search(
            project=project, caller=_caller(request), namespace_prefix=store_keys.labels_of(
                filters["namespace_prefix"]), query=filters["query"], filters=filters["filter"],
            limit=filters["limit"], offset=filters["offset"])
        if filters["refresh_ttl"] and any(r.ttl_seconds is not None for r in found):
            services.memory_ttl_refresh(project=project, record_ids=[r.pk for r in found])
        return Response(StoreItemOutSerializer(found, many=True).data)


class StoreNamespacesView(MemoryView):
    @extend_schema(tags=["memory"], operation_id="memory_store_namespaces",
                   parameters=[StoreNamespacesFilterSerializer],
                   responses={200: inline_serializer("MemoryStoreNamespaces", fields={
                       "namespaces": serializers.ListField(child=serializers.ListField(
                           child=serializers.CharField()))})},
                   description="The namespaces holding items the caller can read, in order, one page.")
    def get(self, request: Request) -> Response:
        filters = _validated(StoreNamespacesFilterSerializer, request.query_params)
        project = _named_project(request, filters.get("project"))
        found = selectors.store_namespaces(
            project=project, caller=_caller(request),
            prefix=store_keys.labels_of(filters["prefix"], wildcard=True),
            suffix=store_keys.labels_of(filters["suffix"], wildcard=True), max_depth=filters["max_depth"],
            limit=filters["limit"], offset=filters["offset"])
        return Response({"namespaces": found})

"""The agent API for sessions and their items: one view per operation, thin (validate, call, render)."""

from typing import Any, TypeVar

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, QueryDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.api_base import (
    MAX_ID,
    AgentApiView,
    AgentListView,
    IdField,
    ReachedFirst,
    SeqPagination,
    VersionField,
    agent_project,
    end_user_scope,
    scope,
)
from harness.http.auth import TokenCheck
from harness.http.body import InSerializer, body_shape
from harness.http.errors import ConflictError, Forbidden, ValidationFailed
from harness.http.idempotency import KeyTaken, claim_of
from harness.http.plain import plain_read, plain_write
from harness.models import Project
from harness.tenancy import EndUserScope
from sessions_app import selectors, services, trimming
from sessions_app.filters import SessionFilter
from sessions_app.models import ItemRole, MemoryPolicy, Session, SessionItem, SessionRole, SessionStatus

_Row = TypeVar("_Row", Session, SessionItem)

# --- serializers: inputs name only what a client may set (any other field is 400 unknown_field:
# harness.http.body.InSerializer); outputs are read-only ------------------------------------------------


class SessionOutSerializer(serializers.ModelSerializer[Session]):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Session
        fields = [
            "id", "project", "ref", "role", "memory_policy", "context_budget_chars", "context_items", "status",
            "version", "last_seq", "metadata", "end_user", "created_at", "updated_at",
        ]
        read_only_fields = fields


class SessionCreateInSerializer(InSerializer):
    role = serializers.ChoiceField(choices=SessionRole.choices, default=SessionRole.MANAGER)
    memory_policy = serializers.ChoiceField(choices=MemoryPolicy.choices, default=MemoryPolicy.BOUNDED)
    # What a projection of the session's context may hold (memory_app.context).
    context_budget_chars = serializers.IntegerField(min_value=1, max_value=200_000, default=4000)
    context_items = serializers.IntegerField(min_value=1, max_value=500, default=20)
    metadata = serializers.DictField(required=False, default=dict)
    ref = serializers.CharField(max_length=64, required=False, default="", allow_blank=True)
    end_user = serializers.CharField(
        max_length=200, required=False, default="", allow_blank=True,
        help_text="The end user the session serves (never changed afterwards). A token narrowed to an end user "
                  "tags its sessions with that user itself; naming another is 403 `end_user_scope`.")


class SessionTransitionInSerializer(InSerializer):
    to = serializers.ChoiceField(choices=SessionStatus.choices)
    expected_version = VersionField(help_text="The session's version you read: a stale one is refused 409 "
                                         "version_conflict, nothing written.")


class ItemOutSerializer(serializers.ModelSerializer[SessionItem]):
    session = serializers.IntegerField(source="session_id", read_only=True)
    run = serializers.IntegerField(source="run_id", read_only=True, allow_null=True)
    content = serializers.JSONField(read_only=True)

    class Meta:
        model = SessionItem
        fields = ["id", "session", "seq", "role", "content", "run", "created_at"]
        read_only_fields = fields


class ItemInSerializer(InSerializer):
    role = serializers.ChoiceField(choices=ItemRole.choices)
    content = serializers.JSONField()
    run = IdField(required=False, allow_null=True, default=None)


class ItemsAppendInSerializer(InSerializer):
    # What ItemInSerializer(many=True, allow_empty=False, max_length=...) builds, spelled out: the stubs'
    # many=True signature does not take the list's max_length.
    items: serializers.ListSerializer[None] = serializers.ListSerializer(
        child=ItemInSerializer(), allow_empty=False, max_length=services.MAX_ITEMS_PER_APPEND)
    expected_last_seq = serializers.IntegerField(min_value=0, max_value=2**63 - 1, required=False, allow_null=True)


class ItemsAppendOutSerializer(serializers.Serializer[dict[str, Any]]):  # documents the body post() builds
    items = ItemOutSerializer(many=True)
    last_seq = serializers.IntegerField()


class ItemsLatestOutSerializer(serializers.Serializer[dict[str, Any]]):  # documents what PostgreSQL writes
    session = serializers.IntegerField()
    last_seq = serializers.IntegerField(help_text="The highest seq ever assigned (removed items leave gaps).")
    items = ItemOutSerializer(many=True, help_text="The newest `limit` items, oldest first.")


class ItemsRemoveInSerializer(InSerializer):
    expected_last_seq = serializers.IntegerField(
        min_value=0, max_value=2**63 - 1, required=False, allow_null=True, default=None,
        help_text="Remove only while the session's last_seq is still this (else 409 seq_conflict).")


class ItemPopOutSerializer(serializers.Serializer[dict[str, Any]]):  # documents the body post() builds
    item = ItemOutSerializer(allow_null=True, help_text="The removed item; null when the session had none.")
    last_seq = serializers.IntegerField()


class ItemsClearOutSerializer(serializers.Serializer[dict[str, Any]]):  # documents the body post() builds
    removed = serializers.IntegerField()
    last_seq = serializers.IntegerField()


class ItemsTrimInSerializer(ItemsRemoveInSerializer):
    keep_last = serializers.IntegerField(min_value=0, max_value=2**63 - 1, help_text="How many newest items stay.")


class SummaryInSerializer(InSerializer):
    role = serializers.ChoiceField(choices=ItemRole.choices, default=ItemRole.SYSTEM)
    content = serializers.JSONField()


class ItemsCompactInSerializer(ItemsRemoveInSerializer):
    first_seq = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    last_seq = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    summary = SummaryInSerializer(help_text="The item that stands in the range's place (the agent writes it).")


class ItemsTrimmedOutSerializer(serializers.Serializer[dict[str, Any]]):  # documents the body trimmed_out builds
    removed = serializers.IntegerField()
    first_seq = serializers.IntegerField(allow_null=True, help_text="The removed range (null: nothing went).")
    last_seq = serializers.IntegerField(allow_null=True)
    replaced_hash = serializers.CharField(help_text="SHA-256 of the removed items' canonical JSON "
                                                    "([{seq, role, content, run}] in seq order).")
    summary = ItemOutSerializer(allow_null=True, help_text="The summary item (compaction only).")
    session_last_seq = serializers.IntegerField(help_text="The session's last_seq: unchanged.")


def trimmed_out(trimmed: trimming.Trimmed) -> dict[str, Any]:
    return {"removed": trimmed.removed, "first_seq": trimmed.first_seq, "last_seq": trimmed.last_seq,
            "replaced_hash": trimmed.replaced_hash,
            "summary": item_out(trimmed.summary) if trimmed.summary is not None else None,
            "session_last_seq": trimmed.session_last_seq}


# --- the append's hot path -------------------------------------------------------------------------
# Appending is what agents call most. DRF's nested serializers cost about as much CPU as the append
# itself, so a body in the plain well-formed shape is checked by hand; anything else (a missing or
# odd field, a number given as a string) goes to ItemsAppendInSerializer, which accepts or words
# the error exactly as before. tests/api/test_items_append_fast_path.py holds the two to the same answers.

_ROLES = frozenset(ItemRole.values)
_CREATED_AT = serializers.DateTimeField()
_APPEND_FIELDS = body_shape(ItemsAppendInSerializer).fields
_ITEM_FIELDS = body_shape(ItemsAppendInSerializer).items["items"].fields


def _plain_id(value: Any, low: int) -> bool:
    return value is None or (type(value) is int and low <= value <= MAX_ID)


def items_append_fast(data: Any) -> tuple[list[services.NewItem], int | None] | None:
    """The validated (items, expected_last_seq) of a plain well-formed body, or None: ask the serializer."""
    if not isinstance(data, dict) or not _APPEND_FIELDS.issuperset(data):
        return None
    items, expected = data.get("items"), data.get("expected_last_seq")
    if not isinstance(items, list) or not 0 < len(items) <= services.MAX_ITEMS_PER_APPEND or not _plain_id(
        expected, 0
    ):
        return None
    out: list[services.NewItem] = []
    for item in items:
        if not isinstance(item, dict) or not _ITEM_FIELDS.issuperset(item):
            return None
        role, content, run = item.get("role"), item.get("content"), item.get("run")
        if type(role) is not str or role not in _ROLES or content is None or not _plain_id(run, 1):
            return None
        out.append({"role": role, "content": content, "run_id": run})
    return out, expected


def items_append_validated(data: Any) -> tuple[list[services.NewItem], int | None]:
    fast = items_append_fast(data)
    if fast is not None:
        return fast
    serializer = ItemsAppendInSerializer(data=data)
    serializer.is_valid(raise_exception=True)
    validated = serializer.validated_data
    items: list[services.NewItem] = [
        {"role": i["role"], "content": i["content"], "run_id": i["run"]} for i in validated["items"]
    ]
    return items, validated.get("expected_last_seq")


def item_out(item: SessionItem) -> dict[str, Any]:
    """ItemOutSerializer's representation, built directly."""
    return {"id": item.pk, "session": item.session_id, "seq": item.seq, "role": item.role, "content": item.content,
            "run": item.run_id, "created_at": _CREATED_AT.to_representation(item.created_at)}


# --- views ---------------------------------------------------------------------------------------
# Every view here admits a token narrowed to one end user (harness.tokens.narrowed_token_mint) and confines it:
# a list or a read through the selectors' `end_user`, and a view on `sessions/<pk>/...` by finding the session
# among that user's before it does anything (404 otherwise, as for another project's session). A session's
# end_user is set at its creation and never changed, so the check holds for the rest of the request.


class _SessionReachable(ReachedFirst):
    """Admits a narrowed token and, on `sessions/<pk>/...`, finds the session among its user's first."""

    def reach(self, *, project_ids: list[int], pk: int, end_user: EndUserScope | None) -> None:
        selectors.session_reachable(project_ids=project_ids, session_id=pk, end_user=end_user)


class SessionApiView(_SessionReachable, AgentApiView):
    pass


class SessionListView(_SessionReachable, AgentListView[_Row]):
    pass


@extend_schema(tags=["sessions"])
class SessionListCreateApi(SessionListView[Session]):
    serializer_class = SessionOutSerializer
    filterset_class = SessionFilter

    @extend_schema(operation_id="sessions_list")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Session]:
        return selectors.session_list(project_ids=scope(self.request), end_user=end_user_scope(self.request))

    @extend_schema(
        operation_id="sessions_create", request=SessionCreateInSerializer, responses={201: SessionOutSerializer}
    )
    def post(self, request: Request) -> Response:
        data = SessionCreateInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = dict(data.validated_data)
        confined = end_user_scope(request)
        if confined is not None:
            if confined.session_id is not None:
                raise Forbidden("This token is narrowed to one session; it opens no other.",
                                code="narrowed_token_scope")
            if given["end_user"] not in ("", confined.end_user):
                raise Forbidden("A token narrowed to an end user opens sessions for that user only.",
                                code="end_user_scope")
            given["end_user"] = confined.end_user
        try:
            session = services.session_create(project=agent_project(request), **given)
        except ConflictError as taken:
            # A narrowed caller learns the taken ref's session id only when that session is its own user's: the
            # ref is unique in the project, and another user's session id is not this caller's to know.
            existing = taken.extra.get("id")
            if confined is not None and existing is not None and not selectors.session_list(
                    project_ids=scope(request), end_user=confined).filter(pk=existing).exists():
                raise ConflictError("A session with this ref exists already, for another end user.",
                                    code="already_exists", ref=given.get("ref", "")) from None
            raise
        return Response(SessionOutSerializer(session).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["sessions"])
class SessionDetailApi(SessionApiView):
    @extend_schema(operation_id="sessions_read", responses={200: SessionOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        session = selectors.session_get(project_ids=scope(request), session_id=pk, end_user=end_user_scope(request))
        return Response(SessionOutSerializer(session).data)


@extend_schema(tags=["sessions"])
class SessionTransitionApi(SessionApiView):
    @extend_schema(
        operation_id="sessions_transition", request=SessionTransitionInSerializer,
        responses={200: SessionOutSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        data = SessionTransitionInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        session = services.session_transition(project=agent_project(request), session_id=pk, **data.validated_data)
        return Response(SessionOutSerializer(session).data)


@extend_schema(tags=["sessions"])
class SessionItemsApi(SessionListView[SessionItem]):
    serializer_class = ItemOutSerializer
    pagination_class = SeqPagination
    claims_idempotency_key = True  # the append records its reply under the key itself (harness.http.idempotency)

    @extend_schema(operation_id="session_items_list")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[SessionItem]:
        return selectors.session_item_list(project_ids=scope(self.request), session_id=self.kwargs["pk"],
                                           end_user=end_user_scope(self.request))

    @extend_schema(
        operation_id="session_items_append", request=ItemsAppendInSerializer,
        responses={201: ItemsAppendOutSerializer},
    )
    def post(self, request: Request, pk: int) -> HttpResponse:
        new_items, expected_last_seq = items_append_validated(request.data)
        body = items_append_answer(request._request, agent_project(request), pk, new_items, expected_last_seq)
        return body if isinstance(body, HttpResponse) else Response(body, status=status.HTTP_201_CREATED)


def items_append_answer(request: HttpRequest, project: Project, session_id: int, new_items: list[services.NewItem],
                        expected_last_seq: int | None, caller: TokenCheck | None = None
                        ) -> dict[str, Any] | HttpResponse:
    """The append's 201 body, or the reply already recorded under the request's Idempotency-Key (both doors)."""
    try:
        items = services.session_items_append(project=project, session_id=session_id, items=new_items,
                                              expected_last_seq=expected_last_seq, claim=claim_of(request),
                                              caller=caller)
    except KeyTaken as taken:
        return taken.claim.answer_repeat()
    return {"items": [item_out(item) for item in items], "last_seq": items[-1].seq}


def items_append_plain(request: HttpRequest, pk: int) -> HttpResponse | None:
    """The append's plain path (harness.http.plain): None hands the request to SessionItemsApi."""
    return plain_write(request, items_append_fast, lambda caller, fast: items_append_answer(
        request, caller.project, pk, *fast, caller=caller.check))


_LIMIT_PARAMETER = OpenApiParameter(
    "limit", OpenApiTypes.INT, default=50,
    description=f"How many of the newest items (1..{selectors.MAX_LATEST_ITEMS}, default 50).",
)


def _latest_limit(query: QueryDict) -> int:
    text = query.get("limit", "")
    if not text:
        return 50
    if not (text.isascii() and text.isdigit() and len(text) <= 4):
        raise ValidationFailed(f"limit is between 1 and {selectors.MAX_LATEST_ITEMS}.", code="invalid_limit")
    return int(text)


@extend_schema(tags=["sessions"])
class SessionItemsLatestApi(SessionApiView):
    @extend_schema(
        operation_id="session_items_latest", parameters=[_LIMIT_PARAMETER], responses={200: ItemsLatestOutSerializer},
        description="The session's newest `limit` items in seq order (oldest first) and its `last_seq`, in one "
                    "read: what an agent hands its model before each call.",
    )
    def get(self, request: Request, pk: int) -> HttpResponse:
        # PostgreSQL writes the whole answer (ItemsLatestOutSerializer's shape); it is sent as it comes.
        body = selectors.session_items_latest_json(project_ids=scope(request), session_id=pk,
                                                   limit=_latest_limit(request.query_params))
        return HttpResponse(body, content_type="application/json")


def items_latest_plain(request: HttpRequest, pk: int) -> HttpResponse | None:
    """The newest-items read's plain path (harness.http.plain): None hands the request to SessionItemsLatestApi."""
    return plain_read(request, lambda caller: selectors.session_items_latest_json(
        project_ids=[caller.project.pk], session_id=pk, limit=_latest_limit(request.GET), caller=caller.check))


@extend_schema(tags=["sessions"])
class SessionItemsPopApi(SessionApiView):
    @extend_schema(
        operation_id="session_items_pop", request=ItemsRemoveInSerializer, responses={200: ItemPopOutSerializer},
        description="Remove and return the newest item (`item` null when there is none). Its seq is never "
                    "reused: `last_seq` stays. 409 `session_terminated` on a terminated session.",
    )
    def post(self, request: Request, pk: int) -> Response:
        data = ItemsRemoveInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        removal = services.session_item_pop(
            project=agent_project(request), session_id=pk, actor=Actor.of(request.user),
            expected_last_seq=data.validated_data["expected_last_seq"],
        )
        item = item_out(removal.item) if removal.item is not None else None
        return Response({"item": item, "last_seq": removal.last_seq})


@extend_schema(tags=["sessions"])
class SessionItemsClearApi(SessionApiView):
    @extend_schema(
        operation_id="session_items_clear", request=ItemsRemoveInSerializer, responses={200: ItemsClearOutSerializer},
        description="Remove every item of the session and say how many went. The seqs are never reused: "
                    "`last_seq` stays. 409 `session_terminated` on a terminated session.",
    )
    def post(self, request: Request, pk: int) -> Response:
        data = ItemsRemoveInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        removal = services.session_items_clear(
            project=agent_project(request), session_id=pk, actor=Actor.of(request.user),
            expected_last_seq=data.validated_data["expected_last_seq"],
        )
        return Response({"removed": removal.removed, "last_seq": removal.last_seq})


@extend_schema(tags=["sessions"])
class SessionItemsTrimApi(SessionApiView):
    @extend_schema(
        operation_id="session_items_trim", request=ItemsTrimInSerializer, responses={200: ItemsTrimmedOutSerializer},
        description="Keep the newest `keep_last` items and remove the rest, as one audited event that records "
                    "the removed seq range and the hash of what went. `last_seq` stays. 409 "
                    "`item_shown_by_pending_approval` when a pending approval shows an item that would go.",
    )
    def post(self, request: Request, pk: int) -> Response:
        data = ItemsTrimInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        trimmed = trimming.session_items_trim(
            project=agent_project(request), session_id=pk, actor=Actor.of(request.user),
            keep_last=data.validated_data["keep_last"], expected_last_seq=data.validated_data["expected_last_seq"],
        )
        return Response(trimmed_out(trimmed))


@extend_schema(tags=["sessions"])
class SessionItemsCompactApi(SessionApiView):
    @extend_schema(
        operation_id="session_items_compact", request=ItemsCompactInSerializer,
        responses={200: ItemsTrimmedOutSerializer},
        description="Replace the items with seq in [first_seq, last_seq] by the given summary item, which takes "
                    "the seq of the newest item it replaced; one audited event records the range and the hash of "
                    "what went. 409 `empty_range`, `item_shown_by_pending_approval`, `session_terminated`.",
    )
    def post(self, request: Request, pk: int) -> Response:
        data = ItemsCompactInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        trimmed = trimming.session_items_compact(
            project=agent_project(request), session_id=pk, actor=Actor.of(request.user),
            first_seq=given["first_seq"], last_seq=given["last_seq"], summary=given["summary"]["content"],
            role=given["summary"]["role"], expected_last_seq=given["expected_last_seq"],
        )
        return Response(trimmed_out(trimmed))

"""The agent API for LangGraph threads (harness_client.langgraph.HarnessSaver): their checkpoints and
pending writes, stored as runs and checkpoints (the mapping: runs_app.services.threads).

Thin views, hot paths: a body is checked by the service (each bad field a 400 with its own code), the
reads' JSON is written by PostgreSQL and sent as it comes, after DRF's authentication and permission.
The serializers here document the bodies in the schema, and name the fields each body takes: any other is
400 unknown_field (harness.http.body).

Every view here admits a token narrowed to one end user (`HarnessSaver(end_user=...)`), confined to its user's
threads by the service's `reach` (runs_app.services.threads: another user's thread reads as absent, and is 409
`thread_ref_taken` to a write).
"""

import json
from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request

from harness.actors import Actor
from harness.http.api_base import AgentApiView, agent_project, end_user_scope, scope
from harness.http.body import BodyShape, body_shape, reject_unknown_fields
from harness.http.errors import Forbidden, ValidationFailed
from harness.http.idempotency import KeyTaken, claim_of
from harness.http.parsers import find_unstorable
from runs_app.selectors import threads as thread_reads
from runs_app.services import thread_lifecycle as lifecycle
from runs_app.services import threads

_JSON = "application/json"


def _json_response(body: Any, status: int = 200) -> HttpResponse:
    return HttpResponse(json.dumps(body), content_type=_JSON, status=status)


def _body(request: Request, shape: BodyShape) -> dict[str, Any]:
    data = request.data
    if not isinstance(data, dict):
        raise ValidationFailed("The body must be a JSON object.", code="invalid_body")
    reject_unknown_fields(data, shape)
    return data


_PUT_IN = inline_serializer("ThreadCheckpointIn", {
    "thread_id": serializers.CharField(max_length=threads.MAX_THREAD_ID),
    "checkpoint_ns": serializers.CharField(required=False, allow_blank=True, default=""),
    "checkpoint_id": serializers.CharField(),
    "parent_checkpoint_id": serializers.CharField(required=False, allow_null=True),
    "checkpoint": serializers.DictField(help_text="The LangGraph checkpoint without its channel values."),
    "channel_values": serializers.DictField(
        help_text='Each channel\'s value: JSON, or {"__lg_type__": <serializer type>, "b64": <bytes>}.'),
    "metadata": serializers.DictField(required=False),
    "lease_owner": serializers.CharField(required=False, allow_null=True),
})
_PUT_OUT = inline_serializer("ThreadCheckpointStored", {
    "id": serializers.IntegerField(), "run": serializers.IntegerField(), "thread_id": serializers.CharField(),
    "checkpoint_ns": serializers.CharField(), "checkpoint_id": serializers.CharField(),
    "content_hash": serializers.CharField(),
})
_TUPLE_OUT = inline_serializer("ThreadCheckpointTuple", {
    "id": serializers.IntegerField(), "run": serializers.IntegerField(), "thread_id": serializers.CharField(),
    "checkpoint_ns": serializers.CharField(), "checkpoint_id": serializers.CharField(),
    "parent_checkpoint_id": serializers.CharField(allow_null=True), "checkpoint": serializers.DictField(),
    "channel_values": serializers.DictField(), "metadata": serializers.DictField(),
    "content_hash": serializers.CharField(),
    "pending_writes": serializers.ListField(
        child=serializers.ListField(), help_text="[task_id, channel, value, task_path, idx], in LangGraph's order."),
})
# The list answers a list of the same tuples (a ListSerializer of its class: the schema's items are the tuple).
_TUPLE_LIST = type(_TUPLE_OUT)(many=True)
_WRITES_IN = inline_serializer("ThreadWritesIn", {
    "thread_id": serializers.CharField(max_length=threads.MAX_THREAD_ID),
    "checkpoint_ns": serializers.CharField(required=False, allow_blank=True, default=""),
    "checkpoint_id": serializers.CharField(),
    "task_id": serializers.CharField(allow_blank=True),
    "task_path": serializers.CharField(required=False, allow_blank=True, default=""),
    "writes": serializers.ListField(child=serializers.ListField(), help_text="[idx, channel, value] each."),
})
_THREAD_IN = inline_serializer("ThreadIn", {"thread_id": serializers.CharField(max_length=threads.MAX_THREAD_ID)})
_ENSURE_IN = inline_serializer("ThreadEnsureIn", {
    "thread_id": serializers.CharField(max_length=threads.MAX_THREAD_ID),
    "agent": serializers.CharField(max_length=120, required=False, allow_blank=True, default="",
                                   help_text="The graph's name: the run's `active_agent` (set once)."),
    "end_user": serializers.CharField(
        max_length=200, required=False, allow_blank=True, default="",
        help_text="The end user a new thread's session serves (an existing thread must be that user's: 409 "
                  "thread_ref_taken otherwise). A token narrowed to an end user tags its threads with that user "
                  "itself; naming another is 403 `end_user_scope`."),
})
_PUT_SHAPE, _WRITES_SHAPE, _THREAD_SHAPE = body_shape(_PUT_IN), body_shape(_WRITES_IN), body_shape(_THREAD_IN)
_ENSURE_SHAPE = body_shape(_ENSURE_IN)
_THREAD = OpenApiParameter("thread_id", str, required=True)
_NS = OpenApiParameter("checkpoint_ns", str, description='"" (the root graph) when omitted.')
_ID = OpenApiParameter("checkpoint_id", str)


class ThreadApiView(AgentApiView):
    narrowed_token_allowed = True  # each view passes the caller's end_user_scope to the service as `reach`


class ThreadCheckpointsApi(ThreadApiView):
    claims_idempotency_key = True  # the put records its reply under the key itself (harness.http.idempotency)
    @extend_schema(
        tags=["threads"], operation_id="threads_checkpoints_list", responses={200: _TUPLE_LIST},
        parameters=[
            OpenApiParameter("thread_id", str, description="Every thread of the project when omitted."),
            OpenApiParameter("checkpoint_ns", str, description="Every namespace when omitted."), _ID,
            OpenApiParameter("filter", str, description="A JSON object the metadata must contain."),
            OpenApiParameter("before", str, description="Only checkpoint ids sorting before this one."),
            OpenApiParameter("limit", int),
        ],
        description="A thread's checkpoints with their pending writes, newest first by checkpoint id.",
    )
    def get(self, request: Request) -> HttpResponse:
        query = request.query_params
        metadata_filter = None
        if (text := query.get("filter")) is not None:
            try:
                metadata_filter = json.loads(text)
            except ValueError:
                metadata_filter = None
            if not isinstance(metadata_filter, dict) or find_unstorable(metadata_filter):
                raise ValidationFailed("`filter` must be a JSON object (no NUL, no lone surrogate, finite numbers).",
                                       code="invalid_filter")
        limit = None
        if (text := query.get("limit")) is not None:
            if not text.isdigit() or len(text) > 18:
                raise ValidationFailed("`limit` must be an integer >= 0.", code="invalid_limit")
            limit = int(text)
        body = threads.thread_checkpoints_json(
            project_ids=scope(request), thread_id=query.get("thread_id"), checkpoint_ns=query.get("checkpoint_ns"),
            checkpoint_id=query.get("checkpoint_id"), metadata_filter=metadata_filter, before=query.get("before"),
            limit=limit, reach=end_user_scope(request),
        )
        return HttpResponse(body, content_type=_JSON)

    @extend_schema(tags=["threads"], operation_id="threads_checkpoints_put", request=_PUT_IN,
                   responses={201: _PUT_OUT, 200: _PUT_OUT},
                   description="Store a LangGraph checkpoint (the thread is created on its first one); the same "
                               "id and content again answers 200, other content 409 checkpoint_exists.")
    def post(self, request: Request) -> HttpResponse:
        data = _body(request, _PUT_SHAPE)
        try:
            stored = threads.thread_checkpoint_put(
                project=agent_project(request), thread_id=data.get("thread_id", ""),
                checkpoint_ns=data.get("checkpoint_ns", ""), checkpoint_id=data.get("checkpoint_id", ""),
                parent_checkpoint_id=data.get("parent_checkpoint_id"), checkpoint=data.get("checkpoint"),
                channel_values=data.get("channel_values"), metadata=data.get("metadata", {}),
                lease_owner=data.get("lease_owner"), claim=claim_of(request), reach=end_user_scope(request),
            )
        except KeyTaken as taken:
            return taken.claim.answer_repeat()
        body = {"id": stored.id, "run": stored.run_id, "thread_id": data["thread_id"],
                "checkpoint_ns": data.get("checkpoint_ns", ""), "checkpoint_id": data["checkpoint_id"],
                "content_hash": stored.content_hash}
        return _json_response(body, 201 if stored.created else 200)


class ThreadCheckpointApi(ThreadApiView):
    @extend_schema(tags=["threads"], operation_id="threads_checkpoint_read", responses={200: _TUPLE_OUT},
                   parameters=[_THREAD, _NS, OpenApiParameter("checkpoint_id", str, description="The newest when "
                                                                                                  "omitted.")],
                   description="One checkpoint of a thread with its pending writes; 404 checkpoint_not_found.")
    def get(self, request: Request) -> HttpResponse:
        query = request.query_params
        body = threads.thread_checkpoint_json(
            project_ids=scope(request), thread_id=query.get("thread_id", ""),
            checkpoint_ns=query.get("checkpoint_ns", ""), checkpoint_id=query.get("checkpoint_id"),
            reach=end_user_scope(request),
        )
        return HttpResponse(body, content_type=_JSON)


class ThreadWritesApi(ThreadApiView):
    claims_idempotency_key = True  # the writes record their reply under the key themselves
    @extend_schema(tags=["threads"], operation_id="threads_writes_put", request=_WRITES_IN,
                   responses={201: inline_serializer("ThreadWritesStored", {"written": serializers.IntegerField()})},
                   description="Store a task's pending writes for a checkpoint (which may not be stored yet).")
    def post(self, request: Request) -> HttpResponse:
        data = _body(request, _WRITES_SHAPE)
        rows = data.get("writes")
        if not isinstance(rows, list) or not all(
            isinstance(row, list) and len(row) == 3 and type(row[0]) is int and -(2**31) <= row[0] < 2**31
            for row in rows
        ):
            raise ValidationFailed("`writes` must be a list of [idx, channel, value].", code="invalid_writes")
        try:
            written = threads.thread_writes_put(
                project=agent_project(request), thread_id=data.get("thread_id", ""),
                checkpoint_ns=data.get("checkpoint_ns", ""), checkpoint_id=data.get("checkpoint_id", ""),
                task_id=data.get("task_id", ""), task_path=data.get("task_path", ""),
                writes=[(row[0], row[1], row[2]) for row in rows], claim=claim_of(request),
                reach=end_user_scope(request),
            )
        except KeyTaken as taken:
            return taken.claim.answer_repeat()
        return _json_response({"written": written}, 201)


class ThreadEnsureApi(ThreadApiView):
    @extend_schema(tags=["threads"], operation_id="threads_ensure", request=_ENSURE_IN,
                   responses={200: inline_serializer("ThreadRun", {
                       "thread_id": serializers.CharField(), "run": serializers.IntegerField(),
                       "session": serializers.IntegerField()})},
                   description="The thread's run (and its session), created if the thread is new (its session "
                               "tagged with `end_user`, or with a narrowed token's end user).")
    def post(self, request: Request) -> HttpResponse:
        data = _body(request, _ENSURE_SHAPE)
        thread_id = threads.thread_id_valid(data.get("thread_id", ""))
        end_user = data.get("end_user", "")
        if not isinstance(end_user, str) or len(end_user) > 200 or "\x00" in end_user:
            raise ValidationFailed("`end_user` must be a string of at most 200 characters, without NUL.",
                                   code="invalid_end_user")
        reach = end_user_scope(request)
        if reach is not None and end_user.strip() not in ("", reach.end_user):
            raise Forbidden("A token narrowed to an end user opens threads for that user only.",
                            code="end_user_scope")
        agent = data.get("agent", "")
        if not isinstance(agent, str) or len(agent) > 120 or "\x00" in agent:
            raise ValidationFailed("`agent` must be a string of at most 120 characters, without NUL.",
                                   code="invalid_agent")
        run = threads.thread_ensure(project=agent_project(request), thread_id=thread_id, end_user=end_user,
                                    reach=reach, agent=agent.strip())
        return _json_response({"thread_id": thread_id, "run": run.pk, "session": run.session_id})


class ThreadDeleteApi(ThreadApiView):
    @extend_schema(tags=["threads"], operation_id="threads_delete", request=_THREAD_IN,
                   responses={200: inline_serializer("ThreadDeleted", {
                       "checkpoints": serializers.IntegerField(), "writes": serializers.IntegerField()})},
                   description="Delete a thread's checkpoints and pending writes (audited); its run stays. 409 "
                               "thread_kept (with the `rule`) while a pending approval or an unconsumed effect "
                               "needs the thread.")
    def post(self, request: Request) -> HttpResponse:
        data = _body(request, _THREAD_SHAPE)
        deleted = threads.thread_delete(project=agent_project(request), thread_id=data.get("thread_id", ""),
                                        actor=Actor.of(request.user), reach=end_user_scope(request))
        return _json_response(deleted)


# --- a thread's life past its writes (runs_app.services.thread_lifecycle) ----------------------------------

_COPY_IN = inline_serializer("ThreadCopyIn", {
    "source_thread_id": serializers.CharField(max_length=threads.MAX_THREAD_ID),
    "target_thread_id": serializers.CharField(max_length=threads.MAX_THREAD_ID),
})
_PRUNE_IN = inline_serializer("ThreadPruneIn", {
    "thread_ids": serializers.ListField(child=serializers.CharField(max_length=threads.MAX_THREAD_ID)),
    "strategy": serializers.ChoiceField(choices=lifecycle.STRATEGIES, default="keep_latest"),
})
_FOR_RUNS_IN = inline_serializer("ThreadDeleteForRunsIn", {
    "run_ids": serializers.ListField(child=serializers.CharField(), help_text="LangGraph run ids (metadata.run_id)."),
})
_TTL_IN = inline_serializer("ThreadTtlIn", {
    "thread_id": serializers.CharField(max_length=threads.MAX_THREAD_ID),
    "ttl_days": serializers.IntegerField(allow_null=True, min_value=1, max_value=lifecycle.MAX_TTL_DAYS,
                                         help_text="Days since the thread's last change; null: the project's."),
})
_PRUNED_OUT = inline_serializer("ThreadPruned", {
    "checkpoints": serializers.IntegerField(), "writes": serializers.IntegerField(),
    "kept": serializers.ListField(child=serializers.DictField(), help_text="[{thread_id, rule}]: skipped."),
})
_TTL_OUT = inline_serializer("ThreadTtl", {
    "thread_id": serializers.CharField(), "run": serializers.IntegerField(),
    "ttl_days": serializers.IntegerField(allow_null=True),
    "project_ttl_days": serializers.IntegerField(allow_null=True),
    "expires_at": serializers.DateTimeField(allow_null=True),
})
_COPY_SHAPE, _PRUNE_SHAPE = body_shape(_COPY_IN), body_shape(_PRUNE_IN)
_FOR_RUNS_SHAPE, _TTL_SHAPE = body_shape(_FOR_RUNS_IN), body_shape(_TTL_IN)


class ThreadCopyApi(ThreadApiView):
    @extend_schema(tags=["threads"], operation_id="threads_copy", request=_COPY_IN,
                   responses={201: inline_serializer("ThreadCopied", {
                       "thread_id": serializers.CharField(), "run": serializers.IntegerField(),
                       "source_run": serializers.IntegerField(), "checkpoints": serializers.IntegerField(),
                       "writes": serializers.IntegerField()})},
                   description="Copy a thread to a new thread id (LangGraph's copy_thread): a fork with every "
                               "checkpoint and pending write; 404 thread_not_found, 409 thread_exists.")
    def post(self, request: Request) -> HttpResponse:
        data = _body(request, _COPY_SHAPE)
        copied = lifecycle.thread_copy(
            project=agent_project(request), source_thread_id=data.get("source_thread_id", ""),
            target_thread_id=data.get("target_thread_id", ""), actor=Actor.of(request.user),
            reach=end_user_scope(request))
        return _json_response({"thread_id": copied.thread_id, "run": copied.run.pk, "source_run": copied.source_run.pk,
                               "checkpoints": copied.checkpoints, "writes": copied.writes}, 201)


class ThreadPruneApi(ThreadApiView):
    @extend_schema(tags=["threads"], operation_id="threads_prune", request=_PRUNE_IN, responses={200: _PRUNED_OUT},
                   description="LangGraph's prune: keep each namespace's newest checkpoint (keep_latest) or none "
                               "(delete). A thread a retention keep rule needs is skipped, listed in `kept`.")
    def post(self, request: Request) -> HttpResponse:
        data = _body(request, _PRUNE_SHAPE)
        pruned = lifecycle.thread_prune(
            project=agent_project(request), thread_ids=data.get("thread_ids"),
            strategy=data.get("strategy", "keep_latest"), actor=Actor.of(request.user), reach=end_user_scope(request))
        return _json_response(pruned.as_json())


class ThreadDeleteForRunsApi(ThreadApiView):
    @extend_schema(tags=["threads"], operation_id="threads_delete_for_runs", request=_FOR_RUNS_IN,
                   responses={200: _PRUNED_OUT},
                   description="LangGraph's delete_for_runs: the checkpoints (and writes) whose metadata names one "
                               "of these run ids. A thread a retention keep rule needs is skipped (`kept`).")
    def post(self, request: Request) -> HttpResponse:
        data = _body(request, _FOR_RUNS_SHAPE)
        pruned = lifecycle.thread_delete_for_runs(project=agent_project(request), run_ids=data.get("run_ids"),
                                                  actor=Actor.of(request.user), reach=end_user_scope(request))
        return _json_response(pruned.as_json())


def _ttl_body(run: Any) -> dict[str, Any]:
    expires = thread_reads.thread_expires_at(run)
    return {"thread_id": run.ref, "run": run.pk, "ttl_days": run.thread_ttl_days,
            "project_ttl_days": thread_reads.project_thread_ttl(run.project_id),
            "expires_at": expires.isoformat() if expires else None}


class ThreadTtlApi(ThreadApiView):
    @extend_schema(tags=["threads"], operation_id="threads_ttl_read", responses={200: _TTL_OUT},
                   parameters=[_THREAD],
                   description="A thread's time to live: its own, its project's default, and when it expires.")
    def get(self, request: Request) -> HttpResponse:
        thread_id = threads.thread_id_valid(request.query_params.get("thread_id", ""))
        run = thread_reads.thread_for_reading(project_ids=scope(request), thread_id=thread_id,
                                              reach=end_user_scope(request))
        return _json_response(_ttl_body(run))

    @extend_schema(tags=["threads"], operation_id="threads_ttl_set", request=_TTL_IN, responses={200: _TTL_OUT},
                   description="Set a thread's own TTL in days (null: its project's retention default).")
    def post(self, request: Request) -> HttpResponse:
        data = _body(request, _TTL_SHAPE)
        if "ttl_days" not in data:
            raise ValidationFailed("`ttl_days` is required (null: the project's default).", code="invalid_ttl_days")
        run = lifecycle.thread_ttl_set(project=agent_project(request), thread_id=data.get("thread_id", ""),
                                       ttl_days=data["ttl_days"], actor=Actor.of(request.user),
                                       reach=end_user_scope(request))
        return _json_response(_ttl_body(run))

"""/api/v1/tasks/...: create, list, read, save (compare-and-set) and transition tasks; a task's pending approvals
and effect records are derived from its runs' rows."""

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.http.api_base import MAX_INT, AgentApiView, AgentListView, VersionField, agent_project, scope
from harness.http.body import InSerializer
from harness.models import Project
from runs_app import services
from runs_app.api.common import TEXT_MAX, expected_version_field, validated
from runs_app.filters import TaskFilter
from runs_app.models import Task, TaskStatus
from runs_app.selectors.tasks import task_durable_state, task_get, task_list

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
                cached.update(task_durable_state([task.pk]))
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
    objective = serializers.CharField(max_length=TEXT_MAX)
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
    objective = serializers.CharField(max_length=TEXT_MAX, required=False)
    expected_version = VersionField()


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
        return task_list(project_ids=scope(self.request))

    def get_serializer(self, *args: Any, **kwargs: Any) -> Any:
        """A page's tasks get their derived state in two statements, not two per task."""
        if kwargs.get("many") and args:
            tasks = list(args[0])
            kwargs["context"] = {**self.get_serializer_context(),
                                 "durable": task_durable_state([t.pk for t in tasks])}
            args = (tasks, *args[1:])
        return super().get_serializer(*args, **kwargs)

    @extend_schema(tags=["tasks"], operation_id="tasks_create", request=TaskCreateInSerializer,
                   responses={201: TaskOutSerializer})
    def post(self, request: Request) -> Response:
        data = validated(TaskCreateInSerializer, request.data)
        task = services.task_create(project=agent_project(request), **data)
        return Response(TaskOutSerializer(task).data, status=status.HTTP_201_CREATED)


class TaskDetailApi(AgentApiView):
    @extend_schema(tags=["tasks"], operation_id="tasks_read", responses={200: TaskOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(TaskOutSerializer(task_get(project_ids=scope(request), task_id=pk)).data)

    @extend_schema(tags=["tasks"], operation_id="tasks_save", request=TaskSaveInSerializer,
                   responses={200: TaskOutSerializer},
                   description="Save the task's durable state: a compare-and-set on expected_version.")
    def patch(self, request: Request, pk: int) -> Response:
        data = validated(TaskSaveInSerializer, request.data)
        task = services.task_save(project=agent_project(request), task_id=pk, **data)
        return Response(TaskOutSerializer(task).data)


class TaskTransitionApi(AgentApiView):
    @extend_schema(tags=["tasks"], operation_id="tasks_transition", request=TaskTransitionInSerializer,
                   responses={200: TaskOutSerializer})
    def post(self, request: Request, pk: int) -> Response:
        data = validated(TaskTransitionInSerializer, request.data)
        task = services.task_transition(project=agent_project(request), task_id=pk, **data)
        return Response(TaskOutSerializer(task).data)

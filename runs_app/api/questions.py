"""/api/v1/questions/ (issue 33, part 4): an agent asks a person a question (free text, a choice or a small form,
described by a JSON Schema) and reads the answer when it comes; a reviewer's personal token (or the console)
answers it, once. The service is runs_app.services.questions, the one the console calls too."""

from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.actors import Actor
from harness.http.api_base import AgentApiView, AgentListView, agent_project, scope
from harness.http.body import InSerializer
from harness.http.errors import NotFoundError
from harness.http.permissions import ReviewerOnly
from harness.models import Project
from runs_app.api.common import NothingInSerializer, validated
from runs_app.models import HumanQuestion, QuestionStatus
from runs_app.selectors.questions import question_get, question_list
from runs_app.services.questions import question_answer, question_ask, question_cancel


class QuestionOutSerializer(serializers.ModelSerializer[HumanQuestion]):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    answered_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = HumanQuestion
        fields = ["id", "project", "run", "question", "answer_schema", "context", "fingerprint", "idempotency_key",
                  "asked_by", "status", "version", "answer", "answer_fingerprint", "answered_by", "answered_at",
                  "expires_at", "routed_group", "created_at", "updated_at"]
        read_only_fields = fields


class QuestionAskInSerializer(InSerializer):
    question = serializers.CharField(max_length=5000)
    answer_schema = serializers.JSONField(
        required=False, default=None, allow_null=True,
        help_text='A JSON Schema: free text {"type": "string"} (the default), a choice {"type": "string", "enum": '
                  '[...]}, or a small form {"type": "object", "properties": {...}}.')
    idempotency_key = serializers.CharField(max_length=200)
    run = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    group = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None,
                                     help_text="A reviewer group of the project: only its members answer.")

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # `context` is also the serializer's own attribute (its context): the field is added by name here.
        fields = super().get_fields()
        fields["context"] = serializers.JSONField(
            required=False, default=None, allow_null=True,
            help_text="What the person should see beside the question (an object).")
        return fields


class QuestionAnswerInSerializer(InSerializer):
    answer = serializers.JSONField(help_text="What the question's answer_schema describes.")
    expected_version = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
    expected_fingerprint = serializers.CharField(max_length=64, required=False, allow_null=True, default=None)


class QuestionListAskApi(AgentListView[HumanQuestion]):
    serializer_class = QuestionOutSerializer

    @extend_schema(tags=["questions"], operation_id="questions_list",
                   parameters=[OpenApiParameter("status", str, enum=QuestionStatus.values),
                               OpenApiParameter("run", int)])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[HumanQuestion]:
        run = self.request.query_params.get("run")
        return question_list(project_ids=scope(self.request), status=self.request.query_params.get("status", ""),
                             run=int(run) if run and run.isdigit() else None)

    @extend_schema(tags=["questions"], operation_id="questions_ask", request=QuestionAskInSerializer,
                   responses={201: QuestionOutSerializer},
                   description="Ask a person. The same idempotency_key and question again answers the question "
                               "asked already (maybe answered by now); another question under it is 409.")
    def post(self, request: Request) -> Response:
        data = validated(QuestionAskInSerializer, request.data)
        asked = question_ask(project=agent_project(request), actor=Actor.of(request.user),
                             run_id=data.pop("run"), **data)
        return Response(QuestionOutSerializer(asked).data, status=status.HTTP_201_CREATED)


class QuestionDetailApi(AgentApiView):
    @extend_schema(tags=["questions"], operation_id="questions_read", responses={200: QuestionOutSerializer})
    def get(self, request: Request, pk: int) -> Response:
        found = question_get(project_ids=scope(request), question_id=pk)
        if found is None:
            raise NotFoundError(f"Question {pk} does not exist.")
        return Response(QuestionOutSerializer(found).data)


class QuestionAnswerApi(AgentApiView):
    """For console users with the reviewer role (session or personal token); agent tokens get 403."""

    permission_classes = [ReviewerOnly]

    @extend_schema(tags=["questions"], operation_id="questions_answer", request=QuestionAnswerInSerializer,
                   responses={200: QuestionOutSerializer},
                   description="Answer once: a second answer is 409 already_answered, naming who answered.")
    def post(self, request: Request, pk: int) -> Response:
        data = validated(QuestionAnswerInSerializer, request.data)
        answered = question_answer(project_ids=scope(request), question_id=pk, actor=Actor.of(request.user), **data)
        return Response(QuestionOutSerializer(answered).data)


class QuestionCancelApi(AgentApiView):
    @extend_schema(tags=["questions"], operation_id="questions_cancel", request=NothingInSerializer,
                   responses={200: QuestionOutSerializer},
                   description="Withdraw a pending question (the agent that asked it). 409 question_not_pending.")
    def post(self, request: Request, pk: int) -> Response:
        validated(NothingInSerializer, request.data)
        cancelled = question_cancel(project_ids=scope(request), question_id=pk, actor=Actor.of(request.user))
        return Response(QuestionOutSerializer(cancelled).data)

"""The list filters of runs, events, checkpoints, approvals, effects and tasks (API) and of the
approval inbox (console). Each narrows a queryset a selector scoped already (runs_app.selectors)."""

import datetime as dt

import django_filters
from django.db.models import Q, QuerySet
from django.utils import timezone
from rest_framework import serializers

from harness.http.api_base import IdField
from harness.http.filters import ApiFilter
from harness.tenancy import Role, acting_filter
from runs_app.models import (
    ApprovalRequest,
    ApprovalStatus,
    Checkpoint,
    EffectStatus,
    ExternalEffect,
    FailureCategory,
    Risk,
    Run,
    RunEvent,
    RunStatus,
    Task,
    TaskStatus,
    ToolSchema,
)
from runs_app.policies import may_decide

# --- API -------------------------------------------------------------------------------------------


class RunFilter(django_filters.FilterSet):
    status = ApiFilter(serializers.ChoiceField(choices=RunStatus.choices))
    session = ApiFilter(IdField(), field_name="session_id")
    task = ApiFilter(IdField(), field_name="task_id")
    updated_since = ApiFilter(serializers.DateTimeField(), field_name="updated_at", lookup_expr="gte")

    class Meta:
        model = Run
        fields: list[str] = []


class RunEventFilter(django_filters.FilterSet):
    kind = ApiFilter(serializers.CharField(max_length=64))

    class Meta:
        model = RunEvent
        fields: list[str] = []


class CheckpointFilter(django_filters.FilterSet):
    run = ApiFilter(IdField(), field_name="run_id")
    task = ApiFilter(IdField(), field_name="task_id")

    class Meta:
        model = Checkpoint
        fields: list[str] = []


class ApprovalFilter(django_filters.FilterSet):
    status = ApiFilter(serializers.ChoiceField(choices=ApprovalStatus.choices))
    run = ApiFilter(IdField(), field_name="run_id")

    class Meta:
        model = ApprovalRequest
        fields: list[str] = []


class EffectFilter(django_filters.FilterSet):
    status = ApiFilter(serializers.ChoiceField(choices=EffectStatus.choices))
    run = ApiFilter(IdField(), field_name="run_id")

    class Meta:
        model = ExternalEffect
        fields: list[str] = []


class ToolSchemaFilter(django_filters.FilterSet):
    tool = ApiFilter(serializers.CharField(max_length=120))

    class Meta:
        model = ToolSchema
        fields: list[str] = []


class TaskFilter(django_filters.FilterSet):
    status = ApiFilter(serializers.ChoiceField(choices=TaskStatus.choices))

    class Meta:
        model = Task
        fields: list[str] = []


# --- console ---------------------------------------------------------------------------------------

AGE_FILTERS = {"1h": dt.timedelta(hours=1), "1d": dt.timedelta(days=1), "7d": dt.timedelta(days=7)}


class ApprovalInboxFilter(django_filters.FilterSet):
    """The inbox's filters (`?project=&risk=&older_than=1h|1d|7d&agent=&assigned=me`); its form is the page's."""

    project = django_filters.CharFilter(field_name="project__slug")
    risk = django_filters.ChoiceFilter(choices=Risk.choices, empty_label="any risk")
    older_than = django_filters.ChoiceFilter(
        choices=[("1h", "older than 1 hour"), ("1d", "older than 1 day"), ("7d", "older than 7 days")],
        empty_label="any age", method="filter_older_than",
    )
    agent = django_filters.CharFilter(max_length=200, method="filter_agent")
    # A reviewer's own queue (approval_assign): the filter needs the request's user, so the view passes `request`.
    assigned = django_filters.ChoiceFilter(choices=[("me", "assigned to me")], empty_label="anyone",
                                           method="filter_assigned")
    # "My queue" (issue 33, part 5): what the user may decide now, as a policy routes it: their groups' requests
    # and those no group narrows, not another group's (escalated or eligible), not their own, not another
    # project's where they do not review. The same conditions as the decision's own write.
    queue = django_filters.ChoiceFilter(choices=[("mine", "mine to decide")], empty_label="everyone's",
                                        method="filter_queue")

    class Meta:
        model = ApprovalRequest
        fields: list[str] = []

    def filter_queue(self, queryset: QuerySet[ApprovalRequest], name: str, value: str) -> QuerySet[ApprovalRequest]:
        user = getattr(self.request, "user", None)
        if user is None or not user.pk:
            return queryset.none()
        return queryset.filter(acting_filter(user, Role.REVIEWER), may_decide(user)).exclude(
            requested_by=f"user:{user.get_username()}")

    def filter_assigned(self, queryset: QuerySet[ApprovalRequest], name: str, value: str
                        ) -> QuerySet[ApprovalRequest]:
        user = getattr(self.request, "user", None)
        return queryset.filter(assigned_to_id=user.pk) if user is not None and user.pk else queryset.none()

    def filter_older_than(self, queryset: QuerySet[ApprovalRequest], name: str, value: str
                          ) -> QuerySet[ApprovalRequest]:
        return queryset.filter(created_at__lte=timezone.now() - AGE_FILTERS[value])

    def filter_agent(self, queryset: QuerySet[ApprovalRequest], name: str, value: str) -> QuerySet[ApprovalRequest]:
        return queryset.filter(Q(run__active_agent=value) | Q(requested_by=value))


class RunListFilter(django_filters.FilterSet):
    """The runs list's filters; every one is a query parameter, so a filtered list is a URL to share.

    `project` is not here: the view narrows the projects it pages over (runs_app.selectors.runs.run_page
    seeks each project's index on its own). `sort` is read by the keyset paging, not by a filter.
    """

    status = django_filters.MultipleChoiceFilter(choices=RunStatus.choices)
    agent = django_filters.CharFilter(field_name="active_agent", max_length=120)
    session = django_filters.CharFilter(max_length=64, method="filter_session")
    task = django_filters.CharFilter(max_length=64, method="filter_task")
    blocked_step = django_filters.CharFilter(max_length=64)
    # The seeds' failure category (transient, permission, ...), and the resume's last failure as the
    # worker records it in `metrics.failure_type` (a step, a code or `tool_unreachable`).
    category = django_filters.ChoiceFilter(field_name="failure_category", choices=FailureCategory.choices,
                                           empty_label="any category")
    failure = django_filters.CharFilter(field_name="metrics__failure_type", max_length=64)
    created = django_filters.IsoDateTimeFromToRangeFilter(field_name="created_at")
    updated = django_filters.IsoDateTimeFromToRangeFilter(field_name="updated_at")
    q = django_filters.CharFilter(max_length=200, method="filter_text")

    class Meta:
        model = Run
        fields: list[str] = []

    def filter_session(self, queryset: QuerySet[Run], name: str, value: str) -> QuerySet[Run]:
        return queryset.filter(_id_or_ref("session", value))

    def filter_task(self, queryset: QuerySet[Run], name: str, value: str) -> QuerySet[Run]:
        return queryset.filter(_id_or_ref("task", value))

    def filter_text(self, queryset: QuerySet[Run], name: str, value: str) -> QuerySet[Run]:
        # The error is jsonb: its text (reason, step, codes) is searched as written.
        return queryset.filter(Q(ref__icontains=value) | Q(error__icontains=value))


def _id_or_ref(relation: str, value: str) -> Q:
    """A session or task named by its id (digits) or its ref (S-42, T-7)."""
    by_ref = Q(**{f"{relation}__ref": value})
    return by_ref | Q(**{f"{relation}_id": int(value)}) if value.isdigit() and len(value) < 19 else by_ref


class TaskListFilter(django_filters.FilterSet):
    """The console's task list (`?project=&status=&q=`); `q` is text in the ref or the objective."""

    project = django_filters.CharFilter(field_name="project__slug")
    status = django_filters.ChoiceFilter(choices=TaskStatus.choices, empty_label="any status")
    q = django_filters.CharFilter(max_length=200, method="filter_text")

    class Meta:
        model = Task
        fields: list[str] = []

    def filter_text(self, queryset: QuerySet[Task], name: str, value: str) -> QuerySet[Task]:
        return queryset.filter(Q(ref__icontains=value) | Q(objective__icontains=value))

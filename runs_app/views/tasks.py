"""The task pages: the list and one task's objective, plan, durable state and its history, and what its runs did."""

from django.core.paginator import Paginator
from django.http import HttpResponse
from django.views.decorators.http import require_GET

from harness.http.views import ConsoleRequest, console_page, project_ids, render_page
from runs_app.filters import TaskListFilter
from runs_app.presentation.json_text import pretty
from runs_app.presentation.tasks import task_plan, task_state_history
from runs_app.selectors import tasks as tasks_sel
from runs_app.views.common import query_without_page


@require_GET
@console_page
def task_list(request: ConsoleRequest) -> HttpResponse:
    filters = TaskListFilter(request.GET or None)
    tasks = tasks_sel.task_list(project_ids=project_ids(request)).order_by("-created_at", "-id")
    if filters.is_bound and filters.is_valid():  # a bad value in any filter shows the whole list
        tasks = filters.filter_queryset(tasks)
    page = Paginator(tasks, 50).get_page(request.GET.get("page"))
    return render_page(request, "runs/task_list.html",
                       {"form": filters.form, "page": page, "query": query_without_page(request)},
                       partials=("task-table",))


@require_GET
@console_page
def task_detail(request: ConsoleRequest, task_id: int) -> HttpResponse:
    """A task's objective, plan (completed and pending nodes), durable state and its history, and what
    its runs did: checkpoints, effects, approvals. Read-only."""
    task = tasks_sel.task_inspect(project_ids=project_ids(request), task_id=task_id)
    runs = tasks_sel.task_runs(task)
    run_ids = [run.pk for run in runs]
    context = {
        "task": task,
        "plan": task_plan(task, tasks_sel.task_node_executions(task)),
        "constraints_pretty": pretty(task.constraints),
        "artifacts_pretty": pretty(task.artifact_refs),
        # Derived from the real rows of its runs (seed 001, DurableTaskState), never free JSON a client wrote.
        **{f"{name}_pretty": pretty(value) for name, value in tasks_sel.task_durable_state([task.pk])[task.pk].items()},
        "history": task_state_history(tasks_sel.task_state_versions(task), tasks_sel.STATE_HISTORY),
        "runs": runs,
        "checkpoints": tasks_sel.task_checkpoints(task, run_ids),
        "effects": tasks_sel.task_effects(task, run_ids),
        "approvals": tasks_sel.task_approvals(task, run_ids),
    }
    return render_page(request, "runs/task_detail.html", context)

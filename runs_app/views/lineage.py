"""The lineage pages (a run's or a task's checkpoint tree, a bounded window drawn as SVG), a checkpoint's page and
the diff between two checkpoints.
"""

from typing import Any

from django.http import HttpResponse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET

from harness.http.views import ConsoleRequest, console_page, project_ids, render_page
from runs_app.forms import CheckpointDiffForm
from runs_app.models import Run, Task
from runs_app.presentation import diff
from runs_app.presentation.lineage import lineage_layout
from runs_app.selectors import checkpoints as checkpoints_sel
from runs_app.selectors import runs as runs_sel
from runs_app.selectors import tasks as tasks_sel
from runs_app.selectors.threads import thread_copies, thread_expires_at, thread_ttl_of
from runs_app.services.threads import THREAD_TASK_MODE
from runs_app.views.forks import checkpoint_page


def _lineage_before(request: ConsoleRequest) -> int | None:
    value = request.GET.get("before", "")
    return int(value) if value.isdigit() and len(value) < 19 else None


def _lineage_page(request: ConsoleRequest, *, owner: Run | Task) -> HttpResponse:
    before = _lineage_before(request)
    run, task = (owner, None) if isinstance(owner, Run) else (None, owner)
    rows, older = checkpoints_sel.lineage_window(project_ids=project_ids(request), before=before, run=run, task=task)
    lineage = lineage_layout(rows, truncated=older is not None, older=older)
    thread = None
    if run is not None and run.task_mode == THREAD_TASK_MODE and run.ref:
        # A LangGraph thread: where it was copied from and to (its branches), and its time to live.
        thread = {**thread_copies(project_ids=project_ids(request), run=run), "ttl_days": thread_ttl_of(run),
                  "own_ttl": run.thread_ttl_days is not None, "expires_at": thread_expires_at(run)}
    context = {
        "owner": owner,
        "thread": thread,
        "kind": "run" if run is not None else "task",
        "lineage": lineage,
        "diff_form": CheckpointDiffForm(),
        "paged_back": before is not None,
    }
    return render_page(request, "runs/lineage.html", context)


@require_GET
@console_page
def run_lineage(request: ConsoleRequest, run_id: int) -> HttpResponse:
    run = runs_sel.run_inspect(project_ids=project_ids(request), run_id=run_id)
    return _lineage_page(request, owner=run)


@require_GET
@console_page
def task_lineage(request: ConsoleRequest, task_id: int) -> HttpResponse:
    task = tasks_sel.task_get(project_ids=project_ids(request), task_id=task_id)
    return _lineage_page(request, owner=task)


@require_GET
@console_page
def checkpoint_detail(request: ConsoleRequest, checkpoint_id: int) -> HttpResponse:
    checkpoint = checkpoints_sel.checkpoint_detail(project_ids=project_ids(request), checkpoint_id=checkpoint_id)
    return checkpoint_page(request, checkpoint)


@require_GET
@console_page
def checkpoint_diff(request: ConsoleRequest) -> HttpResponse:
    form = CheckpointDiffForm(request.GET)
    context: dict[str, Any] = {"form": form}
    status = 200
    if form.is_valid():
        ids = project_ids(request)
        a = checkpoints_sel.checkpoint_detail(project_ids=ids, checkpoint_id=form.cleaned_data["a"])
        b = checkpoints_sel.checkpoint_detail(project_ids=ids, checkpoint_id=form.cleaned_data["b"])
        compared = diff.checkpoint_diff(a, b)
        context.update(a=a, b=b, lines=compared.lines, metadata=compared.metadata)
    else:
        status = 400
    response = render_page(request, "runs/checkpoint_diff.html", context, partials=("diff",), status=status)
    # The lineage page pushes this URL while it gets the partial: a cache must not answer an opened link with it.
    patch_vary_headers(response, ("HX-Request",))
    return response

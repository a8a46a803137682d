"""Console pages for approvals, runs and checkpoint lineage. Every write calls runs_app.services."""

import json
import re
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpResponse, QueryDict
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.datastructures import MultiValueDict
from django.views.decorators.http import require_GET, require_POST

from harness.actors import Actor
from harness.http.errors import ConflictError, DomainError, Forbidden, ValidationFailed
from harness.http.views import (
    ConsoleRequest,
    asked_part,
    console_page,
    project_ids,
    project_roles,
    render_page,
    role_required,
    visible_projects,
)
from harness.tenancy import Role, role_project_ids
from runs_app import inspector_panels
from runs_app.filters import ApprovalInboxFilter, RunListFilter, TaskListFilter
from runs_app.forms import (
    AbandonEffectForm,
    ApproveForm,
    AssignForm,
    BulkDecisionForm,
    CheckpointDiffForm,
    EditApproveForm,
    MarkDeliveredForm,
    RejectForm,
    RetryEffectForm,
)
from runs_app.models import ApprovalRequest, ApprovalStatus, EffectDecision, ExternalEffect, Run, RunStatus, Task
from runs_app.presentation import diff
from runs_app.presentation.events import events_shown
from runs_app.presentation.json_text import pretty
from runs_app.presentation.lineage import lineage_layout
from runs_app.presentation.resume_checklist import resume_in_progress, resume_progress
from runs_app.presentation.tasks import task_plan, task_state_history
from runs_app.presentation.timeline import family as event_family
from runs_app.presentation.timeline import run_timeline
from runs_app.resume import RESUME_CHECKS, DryRun, resume_dry_run
from runs_app.selectors import approvals as approvals_sel
from runs_app.selectors import checkpoints as checkpoints_sel
from runs_app.selectors import effects as effects_sel
from runs_app.selectors import handoffs as handoffs_sel
from runs_app.selectors import paging as paging_sel
from runs_app.selectors import runs as runs_sel
from runs_app.selectors import tasks as tasks_sel
from runs_app.services import (
    BulkItem,
    BulkResult,
    Decision,
    approval_assign,
    approval_decide,
    approval_decide_bulk,
    effect_resolve,
    project_reviewers,
)
from runs_app.views_forks import checkpoint_page
from runs_app.views_run_actions import offered_run_actions

# --- approvals -----------------------------------------------------------------------------


@require_GET
@console_page
def approval_inbox(request: ConsoleRequest) -> HttpResponse:
    return render_page(request, "runs/approval_inbox.html", _inbox_context(request), partials=("inbox-table",))


def _inbox_context(request: ConsoleRequest) -> dict[str, Any]:
    filters = ApprovalInboxFilter(request.GET or None)
    # A bad value in any filter shows the whole inbox, as the form's page always has.
    refine = (filters.filter_queryset if filters.is_bound and filters.is_valid()
              else approvals_sel.approval_inbox_unfiltered)
    ids = project_ids(request)
    pending = approvals_sel.approval_inbox(project_ids=ids, refine=refine)
    page = approvals_sel.inbox_page(project_ids=ids, refine=refine, after=request.GET.get("after"),
                          before=request.GET.get("before"))
    return {
        "form": filters.form,
        "page": page,
        # A row is selectable for a bulk decision only in a project where the user reviews (issue 17).
        "reviewer_projects": frozenset(role_project_ids(request.user, Role.REVIEWER, ids)),
        "pending_count": paging_sel.capped_count(pending),
        "count_cap": paging_sel.COUNT_CAP,
        "agents": approvals_sel.inbox_agents(project_ids=ids),
        "query": _query_without_page(request),
        "bulk_form": BulkDecisionForm(),
    }


@require_POST
@console_page
@role_required(Role.REVIEWER)
def approval_bulk(request: ConsoleRequest) -> HttpResponse:
    """Approve or reject every checked row of the inbox, each bound to the version and fingerprint the page
    showed; the inbox comes back with one result per item (decided, or refused and why).

    A request that is wrong as a whole (no row, no reason for a rejection, a malformed row) decides nothing
    and answers 400 with the error.
    """
    form = BulkDecisionForm(request.POST)
    results: list[BulkResult] = []
    error = ""
    status = 200
    try:
        if not form.is_valid():
            raise ValidationFailed(" ".join(str(e) for errors in form.errors.values() for e in errors))
        items = [BulkItem.parse(text) for text in request.POST.getlist("item")]
        results = approval_decide_bulk(
            project_ids=project_ids(request), actor=Actor.of(request.user), decision=form.cleaned_data["decision"],
            reason=form.cleaned_data["reason"], items=items,
        )
    except ValidationFailed as exc:
        error, status = exc.detail, 400
    context = {**_inbox_context(request), "bulk_results": results, "bulk_error": error}
    if error:
        context["bulk_form"] = form  # keeps the reviewer's reason and shows what was wrong
    return render_page(request, "runs/approval_inbox.html", context, status=status)


def _query_without_page(request: ConsoleRequest) -> str:
    params = request.GET.copy()
    for key in ("page", "part", "after", "before"):
        params.pop(key, None)
    return params.urlencode()


def _dry_run(request: ConsoleRequest, approval: ApprovalRequest, roles: dict[str, bool]) -> DryRun:
    """The resume's checks that need no lease or call, as the worker runs them (worker.dry_run, registered with
    runs_app.resume by the worker app: runs_app does not import it), for the approval approved now by this reviewer."""
    return resume_dry_run(approval, reviewer_id=request.user.pk, reviewer_holds_role=roles.get(Role.REVIEWER, False))


def _decision_context(request: ConsoleRequest, approval: ApprovalRequest, **extra: Any) -> dict[str, Any]:
    run = approval.run
    deciding = approval.status == ApprovalStatus.PENDING
    roles = project_roles(request, approval.project_id)
    context = {
        "approval": approval,
        "roles": roles,  # the decision buttons follow the project's roles
        # Run when the page (or its panel) opens and again on submit (_decide): what the resume would block at.
        "dry_run": _dry_run(request, approval, roles) if deciding else None,
        "run": run,
        "arguments_pretty": pretty(approval.arguments),
        "approved_arguments_pretty": pretty(approval.approved_arguments) if approval.approved_arguments else "",
        "edited": bool(approval.approved_fingerprint) and approval.approved_fingerprint != approval.action_fingerprint,
        "approve_form": extra.pop("approve_form", None) or ApproveForm(initial={"version": approval.version}),
        "reject_form": extra.pop("reject_form", None) or RejectForm(initial={"version": approval.version}),
        "edit_form": extra.pop("edit_form", None)
        or EditApproveForm(initial={"version": approval.version, "arguments": pretty(approval.arguments)}),
        **extra,
    }
    if not deciding:
        trace = approvals_sel.resume_trace(approval)
        context.update(trace=events_shown(trace), progress=resume_progress(trace), polling=resume_in_progress(run))
    return context


def _page_context(approval: ApprovalRequest) -> dict[str, Any]:
    """What the full page shows around the decision panel (not needed for its fragments)."""
    checkpoint = approval.run.last_checkpoint
    return {
        "recent_items": [
            (item, json.dumps(item.content, ensure_ascii=False, default=str))
            for item in approvals_sel.session_recent_items(approval.run.session_id)
        ],
        "checkpoint": checkpoint,
        "checkpoint_state_pretty": pretty(checkpoint.state) if checkpoint else "",
        "resume_checks": RESUME_CHECKS,
    }


DETAIL_PARTIALS = ("decision", "trace")


@require_GET
@console_page
def approval_detail(request: ConsoleRequest, approval_id: int) -> HttpResponse:
    approval = approvals_sel.approval_for_decision(project_ids=project_ids(request), approval_id=approval_id)
    context = _decision_context(request, approval)
    if not asked_part(request, DETAIL_PARTIALS):
        context.update(_page_context(approval))
        if approval.status == ApprovalStatus.PENDING:
            context.update(reviewers=project_reviewers(approval.project_id),
                           assign_form=AssignForm(initial={"version": approval.version}))
    return render_page(request, "runs/approval_detail.html", context, partials=DETAIL_PARTIALS)


DecisionForm = ApproveForm | RejectForm | EditApproveForm


def _decide(request: ConsoleRequest, approval_id: int, form_class: type[DecisionForm], decision: str) -> HttpResponse:
    """Validate the form, call approval_decide, and show the outcome in the decision panel.

    1. The approval must be visible to the user (else 404).
    2. An invalid form re-renders the panel with its errors (400 without htmx).
    3. A lost race (`already_decided`) tells this reviewer who decided; the other decision stands.
    4. Success: htmx swaps in the panel, which polls the resume trace; a plain POST redirects.
    """
    ids = project_ids(request)
    approval = approvals_sel.approval_for_decision(project_ids=ids, approval_id=approval_id)
    form = form_class(request.POST)
    form_key = {"ApproveForm": "approve_form", "RejectForm": "reject_form", "EditApproveForm": "edit_form"}[
        form_class.__name__
    ]
    if not form.is_valid():
        return _decision_response(request, approval, status=400, **{form_key: form})
    data = form.cleaned_data
    # Run again at the decision: what it shows may have changed since the page opened. Approving a run whose dry
    # run fails is still the reviewer's to do (a person may approve and then fix what blocks it, e.g. configure
    # the adapter); the panel that answers the decision says which checks failed at that moment.
    at_decision = _dry_run(request, approval, project_roles(request, approval.project_id))
    try:
        approval = approval_decide(
            project=approval.project_id,
            approval_id=approval.pk,
            actor=Actor.of(request.user),
            decision=decision,
            reason=data.get("reason", ""),
            edited_arguments=data.get("arguments"),
            expected_version=data.get("version"),
        )
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    except ConflictError as exc:
        notice = exc.detail
        if exc.code != "already_decided":
            notice = f"{exc.detail} Reload the page to see the approval as it is now."
        approval = approvals_sel.approval_for_decision(project_ids=ids, approval_id=approval_id)
        return _decision_response(request, approval, status=409, conflict=notice)
    except DomainError as exc:
        return _decision_response(request, approval, status=400, error=exc.detail, **{form_key: form})
    if not request.htmx:
        if decision == Decision.APPROVE and not at_decision.passes:
            messages.warning(request, _failing_notice(at_decision))
        return redirect(reverse("runs:approval_detail", args=[approval_id]))
    approval = approvals_sel.approval_for_decision(project_ids=ids, approval_id=approval_id)
    return _decision_response(request, approval, status=200,
                              dry_run_at_decision=at_decision if decision == Decision.APPROVE else None)


def _failing_notice(dry_run: DryRun) -> str:
    return "Approved although the resume's dry run failed at the decision: " + "; ".join(
        f"{line.label} ({line.step}): {line.reason}" for line in dry_run.failing) + ". The resume will block there."


def _decision_response(
    request: ConsoleRequest, approval: ApprovalRequest, *, status: int, **extra: Any
) -> HttpResponse:
    context = _decision_context(request, approval, **extra)
    if request.htmx:
        # htmx 2 does not swap 4xx responses by default; the panel itself carries the outcome, and
        # the page's status badges are updated out of band.
        context["oob"] = True
        return render_page(request, "runs/approval_detail.html", context, part="decision")
    context.update(_page_context(approval))
    return render_page(request, "runs/approval_detail.html", context, status=status)


@require_POST
@console_page
@role_required(Role.REVIEWER)
def approval_assign_view(request: ConsoleRequest, approval_id: int) -> HttpResponse:
    """Assign the approval to a reviewer of its project (or nobody), then show its page again."""
    ids = project_ids(request)
    approval = approvals_sel.approval_for_decision(project_ids=ids, approval_id=approval_id)
    form = AssignForm(request.POST)
    if form.is_valid():
        try:
            approval_assign(project_ids=ids, approval_id=approval.pk, actor=Actor.of(request.user),
                            assignee=form.cleaned_data["assignee"], expected_version=form.cleaned_data["version"])
        except DomainError as exc:
            messages.error(request, exc.detail)
        else:
            messages.success(request, f"Assigned to {form.cleaned_data['assignee'] or 'nobody'}.")
    return redirect(reverse("runs:approval_detail", args=[approval_id]))


@require_POST
@console_page
@role_required(Role.REVIEWER)
def approval_approve(request: ConsoleRequest, approval_id: int) -> HttpResponse:
    return _decide(request, approval_id, ApproveForm, Decision.APPROVE)


@require_POST
@console_page
@role_required(Role.REVIEWER)
def approval_reject(request: ConsoleRequest, approval_id: int) -> HttpResponse:
    return _decide(request, approval_id, RejectForm, Decision.REJECT)


@require_POST
@console_page
@role_required(Role.REVIEWER)
def approval_edit_approve(request: ConsoleRequest, approval_id: int) -> HttpResponse:
    return _decide(request, approval_id, EditApproveForm, Decision.APPROVE)


# --- runs ----------------------------------------------------------------------------------


def _run_filters(data: QueryDict, *, drop: set[str]) -> RunListFilter:
    """The list's filters without those named in `drop` (a range filter's `_after`/`_before` too)."""
    kept = MultiValueDict({key: values for key, values in data.lists()
                           if key not in drop and key.rsplit("_", 1)[0] not in drop})
    filters = RunListFilter(kept)
    filters.is_valid()  # what is left is valid: every bad filter was dropped
    return filters


RUN_SORT_LABELS = (("-created", "newest first"), ("created", "oldest first"), ("-updated", "recently updated"),
                   ("updated", "least recently updated"))


@require_GET
@console_page
def run_list(request: ConsoleRequest) -> HttpResponse:
    """Runs across the user's projects, filtered by the URL's query (shareable), paged by seeking.

    A bad value in a filter is shown beside the form and that filter is not applied (the others are).
    """
    filters = RunListFilter(request.GET)
    errors = {} if filters.is_valid() else filters.errors
    applied = _run_filters(request.GET, drop=set(errors))
    slug = request.GET.get("project", "")
    ids = [p.pk for p in visible_projects(request) if not slug or p.slug == slug]
    sort = request.GET.get("sort", "-created")
    sort = sort if sort in runs_sel.RUN_SORTS else "-created"
    page = runs_sel.run_page(project_ids=ids, refine=applied.filter_queryset, sort=sort,
                        after=request.GET.get("after"), before=request.GET.get("before"))
    # Each status's count under the other filters: a click on a count narrows the list to it.
    counts = runs_sel.run_status_counts(project_ids=ids,
                                   refine=_run_filters(request.GET, drop={*errors, "status"}).filter_queryset)
    query = _query_without_page(request)
    without_status = request.GET.copy()
    for key in ("status", "page", "part", "after", "before"):
        without_status.pop(key, None)
    context = {
        "form": filters.form,
        "errors": errors,
        "page": page,
        "query": query,
        "status_counts": [(status, counts.get(status, 0)) for status in RunStatus.values],
        "status_query": without_status.urlencode(),
        "count_cap": paging_sel.COUNT_CAP,
        "selected_statuses": request.GET.getlist("status"),
        "sort": sort,
        "sorts": RUN_SORT_LABELS,
        "project": slug,
        "agents": runs_sel.run_agents(project_ids=ids),
        "blocked_steps": runs_sel.run_blocked_steps(project_ids=ids),
        "statuses": RunStatus.values,
    }
    return render_page(request, "runs/run_list.html", context, partials=("run-table",))



INSPECTOR_PARTIALS = ("events", "timeline")


@require_GET
@console_page
def run_inspector(request: ConsoleRequest, run_id: int) -> HttpResponse:
    run = runs_sel.run_inspect(project_ids=project_ids(request), run_id=run_id)
    part = asked_part(request, INSPECTOR_PARTIALS)
    context: dict[str, Any] = {"run": run}
    if part != "timeline":
        events = Paginator(runs_sel.run_events(run), 100).get_page(request.GET.get("page"))
        context.update(events=events, events_shown=events_shown(list(events.object_list)))
    if part != "events":
        family = request.GET.get("kind", "")
        family = family if re.fullmatch(r"[\w-]{1,64}", family) else ""
        node_executions = runs_sel.run_node_executions(run)
        window = runs_sel.run_timeline_events(run, family=family)
        # The service's own families, and whatever an agent named its events (`note`, `tool.call`, ...).
        families = sorted({*runs_sel.EVENT_FAMILIES, *(event_family(e.kind) for e in window),
                           *([family] if family else [])})
        context.update(
            timeline=run_timeline(window, sorted(node_executions, key=lambda n: (n.started_at, n.pk)),
                                  families=families, show_nodes=family in ("", "node")),
            timeline_family=family, timeline_limit=runs_sel.TIMELINE_EVENTS, node_executions=node_executions,
        )
    if not part:
        context.update(
            cursor_pretty=pretty(run.cursor),
            error_pretty=pretty(run.error) if run.error else "",
            bound_result_pretty=pretty(run.bound_result) if run.bound_result is not None else "",
            metrics_pretty=pretty(run.metrics),
            effects=effects_sel.run_effects(run),
            approvals=approvals_sel.run_approvals(run),
            handoffs=handoffs_sel.run_handoffs(run),
            run_actions=offered_run_actions(request, run),
            **inspector_panels.panels(run),  # the context snapshots (memory_app), registered from above
        )
    return render_page(request, "runs/run_inspector.html", context, partials=INSPECTOR_PARTIALS)


# --- tasks ---------------------------------------------------------------------------------


@require_GET
@console_page
def task_list(request: ConsoleRequest) -> HttpResponse:
    filters = TaskListFilter(request.GET or None)
    tasks = tasks_sel.task_list(project_ids=project_ids(request)).order_by("-created_at", "-id")
    if filters.is_bound and filters.is_valid():  # a bad value in any filter shows the whole list
        tasks = filters.filter_queryset(tasks)
    page = Paginator(tasks, 50).get_page(request.GET.get("page"))
    return render_page(request, "runs/task_list.html",
                       {"form": filters.form, "page": page, "query": _query_without_page(request)},
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


# --- effects whose outcome is unknown ------------------------------------------------------


EffectForm = MarkDeliveredForm | RetryEffectForm | AbandonEffectForm
_EFFECT_FORMS: dict[str, tuple[str, type[EffectForm]]] = {
    EffectDecision.MARK_DELIVERED: ("delivered_form", MarkDeliveredForm),
    EffectDecision.RETRY: ("retry_form", RetryEffectForm),
    EffectDecision.ABANDON: ("abandon_form", AbandonEffectForm),
}


def _effect_page(request: ConsoleRequest, effect: ExternalEffect, *, status: int = 200, **extra: Any) -> HttpResponse:
    context: dict[str, Any] = {
        "effect": effect,
        "roles": project_roles(request, effect.project_id),
        "result_pretty": pretty(effect.result) if effect.result is not None else "",
        "answer_pretty": pretty(effect.answer) if effect.answer is not None else "",
        "resolution_pretty": pretty(effect.resolution) if effect.resolution is not None else "",
        "run": effect.run,
    }
    for key, form_class in _EFFECT_FORMS.values():
        context[key] = extra.pop(key, None) or form_class(initial={"version": effect.version})
    context.update(extra)
    return render_page(request, "runs/effect_detail.html", context, status=status)


@require_GET
@console_page
def effect_detail(request: ConsoleRequest, effect_id: int) -> HttpResponse:
    return _effect_page(request, effects_sel.effect_detail(project_ids=project_ids(request), effect_id=effect_id))


def _resolve(request: ConsoleRequest, effect_id: int, decision: str) -> HttpResponse:
    """Validate the decision's form, call effect_resolve, and come back to the effect's page.

    The effect must be visible (else 404); an invalid form or a refused decision re-renders the page with
    it (400, 409); success redirects to the page, which shows the decision and the run's resume.
    """
    effect = effects_sel.effect_detail(project_ids=project_ids(request), effect_id=effect_id)
    key, form_class = _EFFECT_FORMS[decision]
    form = form_class(request.POST)
    if not form.is_valid():
        return _effect_page(request, effect, status=400, **{key: form})
    data = form.cleaned_data
    try:
        effect_resolve(project=effect.project_id, effect_id=effect.pk, actor=Actor.of(request.user),
                       decision=decision, reason=data.get("reason", ""), evidence=data.get("evidence", ""),
                       result=data.get("result"), expected_version=data.get("version"))
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    except ConflictError as exc:
        return _effect_page(request, effects_sel.effect_detail(project_ids=project_ids(request), effect_id=effect_id),
                            status=409, conflict=f"{exc.detail} Reload the page to see the effect as it is now.")
    except DomainError as exc:
        return _effect_page(request, effect, status=400, error=exc.detail, **{key: form})
    return redirect(reverse("runs:effect_detail", args=[effect_id]))


@require_POST
@console_page
@role_required(Role.REVIEWER)
def effect_mark_delivered(request: ConsoleRequest, effect_id: int) -> HttpResponse:
    return _resolve(request, effect_id, EffectDecision.MARK_DELIVERED)


@require_POST
@console_page
@role_required(Role.REVIEWER)
def effect_retry(request: ConsoleRequest, effect_id: int) -> HttpResponse:
    return _resolve(request, effect_id, EffectDecision.RETRY)


@require_POST
@console_page
@role_required(Role.REVIEWER)
def effect_abandon(request: ConsoleRequest, effect_id: int) -> HttpResponse:
    return _resolve(request, effect_id, EffectDecision.ABANDON)


# --- lineage -------------------------------------------------------------------------------


def _lineage_before(request: ConsoleRequest) -> int | None:
    value = request.GET.get("before", "")
    return int(value) if value.isdigit() and len(value) < 19 else None


def _lineage_page(request: ConsoleRequest, *, owner: Run | Task) -> HttpResponse:
    before = _lineage_before(request)
    run, task = (owner, None) if isinstance(owner, Run) else (None, owner)
    rows, older = checkpoints_sel.lineage_window(project_ids=project_ids(request), before=before, run=run, task=task)
    lineage = lineage_layout(rows, truncated=older is not None, older=older)
    context = {
        "owner": owner,
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
        context.update(a=a, b=b, lines=diff.checkpoint_diff(a, b))
    else:
        status = 400
    return render_page(request, "runs/checkpoint_diff.html", context, partials=("diff",), status=status)

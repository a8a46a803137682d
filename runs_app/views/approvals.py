"""The approval pages: the inbox (paged by seeking, filtered, with bulk decisions) and one approval's decision page:
what a reviewer decides on, the resume's dry run, the decision itself, and the resume's checklist and trace after it
(polled while the worker is on it).
"""

import datetime as dt
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
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
)
from harness.tenancy import Role, role_project_ids
from runs_app.filters import ApprovalInboxFilter
from runs_app.forms import ApproveForm, AssignForm, BulkDecisionForm, EditApproveForm, RejectForm
from runs_app.models import ApprovalRequest, ApprovalStatus, StandingApproval
from runs_app.presentation.approval_outcome import approval_outcome
from runs_app.presentation.bulk_preview import bulk_previews
from runs_app.presentation.events import events_shown
from runs_app.presentation.json_text import pretty
from runs_app.presentation.resume_checklist import resume_in_progress, resume_progress
from runs_app.resume import DryRun, resume_checks, resume_dry_run
from runs_app.selectors import approvals as approvals_sel
from runs_app.selectors import live as live_sel
from runs_app.selectors import paging as paging_sel
from runs_app.selectors import questions as questions_sel
from runs_app.services import (
    BulkItem,
    BulkResult,
    Decision,
    approval_assign,
    approval_decide,
    approval_decide_bulk,
    project_reviewers,
)
from runs_app.services.standing_approvals import standing_approval_create
from runs_app.typed_edit import TypedEditForm
from runs_app.views.common import query_without_page
from runs_app.views.live import poll_of, unchanged
from sessions_app.presentation import conversation, state_shown


@require_GET
@console_page
def approval_inbox(request: ConsoleRequest) -> HttpResponse:
    if request.GET.get("kind") == "question":  # the inbox's other kind of request (issue 33): questions to people
        ids = project_ids(request)
        return render_page(request, "runs/question_inbox.html", {
            "questions": list(questions_sel.pending_questions(project_ids=ids)[:200]),
            "answered": list(questions_sel.question_list(project_ids=ids, status="answered")[:20])})
    # The table polls itself (runs_app.views.live): an unchanged inbox answers 204 after one statement.
    version = live_sel.inbox_version(project_ids=project_ids(request))
    if asked_part(request, INBOX_PARTIALS) and (answer := unchanged(request, version)) is not None:
        return answer
    return render_page(request, "runs/approval_inbox.html", _inbox_context(request, version),
                       partials=INBOX_PARTIALS)


INBOX_PARTIALS = ("inbox-table",)


@require_GET
@console_page
def approval_decided(request: ConsoleRequest) -> HttpResponse:
    """The last week's decisions, newest first: who decided, the reason, and what the reviewer changed (the same
    arguments diff as the approval page, the audit entry and the webhook)."""
    decided = approvals_sel.recently_decided(project_ids=project_ids(request), now=timezone.now())
    page = Paginator(decided, 50).get_page(request.GET.get("page"))
    return render_page(request, "runs/approval_decided.html",
                       {"page": page, "days": approvals_sel.RECENT_DECISIONS_DAYS,
                        "query": query_without_page(request)})


def _inbox_context(request: ConsoleRequest, version: str | None = None) -> dict[str, Any]:
    filters = ApprovalInboxFilter(request.GET or None, request=request)
    # A bad value in any filter shows the whole inbox, as the form's page always has.
    refine = (filters.filter_queryset if filters.is_bound and filters.is_valid()
              else approvals_sel.approval_inbox_unfiltered)
    ids = project_ids(request)
    page = approvals_sel.inbox_page(project_ids=ids, refine=refine, after=request.GET.get("after"),
                          before=request.GET.get("before"))
    return {
        "form": filters.form,
        "page": page,
        # A row is selectable for a bulk decision only in a project where the user reviews (issue 17).
        "reviewer_projects": frozenset(role_project_ids(request.user, Role.REVIEWER, ids)),
        "pending_count": approvals_sel.pending_count(project_ids=ids, refine=refine),
        "count_cap": paging_sel.COUNT_CAP,
        "agents": approvals_sel.inbox_agents(project_ids=ids),
        "query": query_without_page(request),
        "bulk_form": BulkDecisionForm(),
        "bulk_previews": bulk_previews(page.object_list),
        "assigned_to_me": request.GET.get("assigned") == "me",
        "my_queue": request.GET.get("queue") == "mine",
        "live": poll_of(request, version if version is not None else live_sel.inbox_version(project_ids=ids),
                        part="inbox-table", path=reverse("runs:approval_inbox")),
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


def _dry_run(request: ConsoleRequest, approval: ApprovalRequest, roles: dict[str, bool]) -> DryRun:
    """The resume's checks that need no lease or call, as the worker runs them (worker.dry_run, registered with
    runs_app.resume by the worker app: runs_app does not import it), for the approval approved now by this reviewer."""
    return resume_dry_run(approval, reviewer_id=request.user.pk, reviewer_holds_role=roles.get(Role.REVIEWER, False))


def _decision_context(request: ConsoleRequest, approval: ApprovalRequest, **extra: Any) -> dict[str, Any]:
    run = approval.run
    deciding = approval.status == ApprovalStatus.PENDING
    roles = project_roles(request, approval.project_id)
    outcome = approval_outcome(approval)
    context = {
        "approval": approval,
        "outcome": outcome,  # what every part of the page says the approval came to (badge, headings, decision)
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
        "typed_form": extra.pop("typed_form", None) or _typed_form(approval),
        # The policy's quorum and eligible groups, and the votes so far (issue 33).
        "quorum": approvals_sel.approval_quorum(approval, request.user),
        **dict(zip(("standing_offer", "standing_refusal"), standing_offer(approval) if deciding else (False, ""),
                   strict=True)),
        **extra,
    }
    if not deciding:
        trace = approvals_sel.resume_trace(approval)
        resuming = resume_in_progress(run)
        # An approved action the agent runs itself: the page keeps asking, more slowly, until the agent reports.
        context.update(trace=events_shown(trace), progress=resume_progress(trace, approval.executor),
                       resuming=resuming, polling=resuming or outcome.waiting_for_agent,
                       poll_every="1s" if resuming else "3s")
    return context


def _page_context(approval: ApprovalRequest) -> dict[str, Any]:
    """What the full page shows around the decision panel (not needed for its fragments)."""
    checkpoint = approval.run.last_checkpoint
    return {
        "conversation": conversation(approvals_sel.session_recent_items(approval.run.session_id)),
        "checkpoint": checkpoint,
        "checkpoint_state": state_shown(checkpoint.state) if checkpoint else None,
        "resume_checks": resume_checks(approval.executor),
    }


DETAIL_PARTIALS = ("decision", "trace")


@require_GET
@console_page
def approval_detail(request: ConsoleRequest, approval_id: int) -> HttpResponse:
    approval = approvals_sel.approval_for_decision(project_ids=project_ids(request), approval_id=approval_id)
    context = _decision_context(request, approval)
    if asked_part(request, DETAIL_PARTIALS) == "trace":
        context["oob_trace"] = True  # the poll also brings the page's badge, headings and run status up to date
    if not asked_part(request, DETAIL_PARTIALS):
        context.update(_page_context(approval))
        if approval.status == ApprovalStatus.PENDING:
            context.update(reviewers=project_reviewers(approval.project_id),
                           assign_form=AssignForm(initial={"version": approval.version}))
    return render_page(request, "runs/approval_detail.html", context, partials=DETAIL_PARTIALS)


DecisionForm = ApproveForm | RejectForm | EditApproveForm | TypedEditForm


def _typed_form(approval: ApprovalRequest, data: Any = None) -> TypedEditForm | None:
    """The edit form generated from the schema version the approval was validated against (None: it names none,
    or the schema has arguments a typed field cannot edit: the raw JSON form alone)."""
    schema = approval.tool_schema.schema if approval.tool_schema is not None else None
    form = TypedEditForm(data, schema=schema, requested=approval.arguments, initial={"version": approval.version})
    return form if form.properties else None


def _decide(request: ConsoleRequest, approval_id: int, form_class: type[DecisionForm], decision: str) -> HttpResponse:
    """Validate the form, call approval_decide, and show the outcome in the decision panel.

    1. The approval must be visible to the user (else 404).
    2. An invalid form re-renders the panel with its errors (400 without htmx).
    3. A lost race (`already_decided`) tells this reviewer who decided; the other decision stands.
    4. Success: htmx swaps in the panel, which polls the resume trace; a plain POST redirects.
    """
    ids = project_ids(request)
    approval = approvals_sel.approval_for_decision(project_ids=ids, approval_id=approval_id)
    form = (_typed_form(approval, request.POST) if form_class is TypedEditForm
            else form_class(request.POST))  # type: ignore[call-arg]  # the three forms without a schema
    if form is None:  # a typed edit of an approval with no typed form: only the raw JSON edit applies
        raise PermissionDenied("This approval's arguments are edited as JSON.")
    form_key = {"ApproveForm": "approve_form", "RejectForm": "reject_form", "EditApproveForm": "edit_form",
                "TypedEditForm": "typed_form"}[form_class.__name__]
    if not form.is_valid():
        return _decision_response(request, approval, status=400, **{form_key: form})
    data = form.cleaned_data
    # Run again at the decision: what it shows may have changed since the page opened. Approving a run whose dry
    # run fails is still the reviewer's to do (a person may approve and then fix what blocks it, e.g. configure
    # the adapter); the panel that answers the decision says which checks failed at that moment.
    at_decision = _dry_run(request, approval, project_roles(request, approval.project_id))
    asked = approval
    try:
        with transaction.atomic():  # "approve and don't ask again": both written, or neither
            approval = approval_decide(
                project=approval.project_id,
                approval_id=approval.pk,
                actor=Actor.of(request.user),
                decision=decision,
                reason=data.get("reason", ""),
                edited_arguments=form.arguments() if isinstance(form, TypedEditForm) else data.get("arguments"),
                expected_version=data.get("version"),
                reject_option=data.get("reject_option") or "",
            )
            if isinstance(form, ApproveForm) and data.get("standing"):
                rule = _standing_from(request, asked, data)
                messages.success(request, f"Standing approval #{rule.pk}: {rule.tool} is approved without asking "
                                          f"until {rule.expires_at:%Y-%m-%d %H:%M}, at most {rule.max_uses} times.")
    except Forbidden as exc:
        raise PermissionDenied(exc.detail) from None
    except ConflictError as exc:
        notice = exc.detail
        if exc.code != "already_decided":
            notice = f"{exc.detail} Reload the page to see the approval as it is now."
        approval = approvals_sel.approval_for_decision(project_ids=ids, approval_id=approval_id)
        return _decision_response(request, approval, status=409, conflict=notice)
    except DomainError as exc:
        if isinstance(exc, ValidationFailed) and "field" in exc.extra:  # the failing argument's own error
            _refuse_field(form, str(exc.extra["field"]), exc)
            return _decision_response(request, approval, status=400, **{form_key: form})
        return _decision_response(request, approval, status=400, error=exc.detail, **{form_key: form})
    if not request.htmx:
        if decision == Decision.APPROVE and not at_decision.passes:
            messages.warning(request, _failing_notice(at_decision))
        return redirect(reverse("runs:approval_detail", args=[approval_id]))
    approval = approvals_sel.approval_for_decision(project_ids=ids, approval_id=approval_id)
    return _decision_response(request, approval, status=200,
                              dry_run_at_decision=at_decision if decision == Decision.APPROVE else None)


def _standing_from(request: ConsoleRequest, approval: ApprovalRequest, data: dict[str, Any]) -> StandingApproval:
    """The standing approval the approve form's "don't ask again" asks for, beside its approval: the same tool, for
    the requesting agent (or the session, or the run), these exact arguments or any, for the hours and uses given."""
    scope = data.get("standing_scope") or "agent"
    agent = approval.requested_by if scope == "agent" and approval.requested_by.startswith("agent:") else ""
    if scope == "agent" and not agent:
        scope = "session"  # a person's request: there is no agent to name, the session is the narrowest scope left
    return standing_approval_create(
        project=approval.project_id, actor=Actor.of(request.user), tool=approval.tool, agent=agent,
        session_id=approval.run.session_id if scope == "session" else None,
        run_id=approval.run_id if scope == "run" else None,
        match_arguments=dict(approval.arguments) if data.get("standing_match", "exact") != "any" else None,
        expires_in=dt.timedelta(hours=data.get("standing_hours") or 8), max_uses=data.get("standing_uses") or 10,
        reason=f"from approval #{approval.pk}")


def standing_offer(approval: ApprovalRequest) -> tuple[bool, str]:
    """Whether the page offers "approve and don't ask again" for this request, or why not."""
    policy = approval.policy
    if policy is not None and policy.always_ask:
        return False, "its policy says always ask."
    if approval.approvals_required > 1:
        return False, f"its policy asks for {approval.approvals_required} approvals."
    return True, ""


def _refuse_field(form: DecisionForm, field: str, exc: ValidationFailed) -> None:
    """A decision refused for one field: the typed form marks that argument, the raw form its JSON."""
    if isinstance(form, TypedEditForm):
        if field == "reason":
            form.add_error("reason", exc.detail)
        else:
            errors = exc.extra.get("errors") or [{"field": field, "message": exc.detail}]
            for error in errors:
                form.refuse(str(error["field"]), str(error["message"]))
    else:
        form.add_error("reason" if field == "reason" and "reason" in form.fields else
                       "arguments" if "arguments" in form.fields else None, exc.detail)


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


@require_POST
@console_page
@role_required(Role.REVIEWER)
def approval_edit_typed(request: ConsoleRequest, approval_id: int) -> HttpResponse:
    """Edit-and-approve through the form generated from the tool's schema (runs_app.typed_edit)."""
    return _decide(request, approval_id, TypedEditForm, Decision.APPROVE)

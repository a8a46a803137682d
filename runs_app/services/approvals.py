"""Approval requests: an agent asks, a reviewer decides once, the run's resume is queued."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import (
    BooleanField,
    Case,
    CharField,
    DurationField,
    Exists,
    IntegerField,
    JSONField,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Now
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.canonical import action_fingerprint, digest
from harness.db import fetch_instance, returning
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.imports import imported_ids
from harness.models import Project
from harness.tenancy import Role, acting_filter, decision_refusal, decision_scope, holds_role_everywhere
from harness.transitions import cas_transition_row
from runs_app.fencing import UNFENCED, LeaseOwner
from runs_app.machines import APPROVAL_MACHINE
from runs_app.models import (
    ApprovalExecutor,
    ApprovalExpiryDefault,
    ApprovalRequest,
    ApprovalStatus,
    ExpiryAction,
    ExternalEffect,
    Run,
    RunStatus,
    ToolSchema,
)
from runs_app.policies import current_policies, declared_reject_option, may_decide, quorum_reached
from runs_app.presentation.arguments_diff import arguments_diff
from runs_app.services.approval_escalation import approval_escalate
from runs_app.services.approval_quorum import QuorumPending, quorum_vote, vote_record
from runs_app.services.approval_writes import decision_updates
from runs_app.services.checkpoints import checkpoint_waiting
from runs_app.services.runs import run_event_append, run_transition
from runs_app.services.standing_approvals import live_rules, standing_approval_apply
from runs_app.signals import approval_requested, resume_requested
from runs_app.tool_schemas import check_arguments


def approval_request_create(
    *,
    project: Project,
    run_id: int,
    tool: str,
    arguments: dict[str, Any],
    idempotency_key: str,
    risk: str = "high",
    reason: str = "",
    actor: Actor,
    expected_version: int | None = None,
    expires_at: dt.datetime | None = None,
    executor: str = ApprovalExecutor.WORKER,
    gate: dict[str, Any] | None = None,
    lease_owner: LeaseOwner = UNFENCED,
) -> ApprovalRequest:
    """Post a pending action and move its run to waiting_approval in the same transaction.

    Without `expires_at`, the project's default for the tool and risk level applies (ApprovalExpiryDefault),
    if it has one.

    The move releases the run's lease in the same write (run_transition: a waiting state holds no
    lease), so the resume after the decision never waits for the asking agent's lease to run out. A
    checkpoint of the waiting run is written with it (`checkpoint_waiting`: what it waits on, bound to the
    approval), which is also the checkpoint before the consequential write the approval allows.
    `executor` says who runs the approved tool: the resume worker through its adapter ("worker"), or
    the agent that asked ("agent": the resume binds the decision to the run and hands it back). The move is
    fenced on the run's lease (runs_app.fencing: `lease_owner`): a refused one writes nothing, the approval
    neither. `gate`: more of what the waiting checkpoint records about the gate (the worker's repair
    declaration: worker.repair).

    When the project declares a schema for the tool (runs_app.services.tool_schemas), the arguments are validated
    against its current version (read in the run's statement: no round trip of its own): arguments that do not
    match are refused, 400 `arguments_invalid` naming the `field`, nothing written; the approval records the
    version it was validated against (`tool_schema`, `tool_schema_version`). Without one, both are None.
    """
    if not tool or not idempotency_key:
        raise ValidationFailed("An approval needs a tool and an idempotency key.", code="invalid")
    if executor not in ApprovalExecutor.values:
        raise ValidationFailed(f"executor is one of {', '.join(ApprovalExecutor.values)}.", code="invalid")
    fingerprint = action_fingerprint(tool, arguments)
    with transaction.atomic():
        effects, approvals = _key_taken(project, idempotency_key, tool, arguments, fingerprint)
        # The tool's current schema version, read in the run's statement (no round trip of its own).
        schemas = ToolSchema.objects.filter(project=project, tool=tool).order_by("-version")
        policies = current_policies(project.pk, tool)
        run = Run.objects.filter(project=project, pk=run_id).annotate(
            key_effect=Exists(effects), key_approval=Exists(approvals),
            default_expiry=Subquery(_expiry_default(project, tool, risk), output_field=DurationField())
            if expires_at is None else Value(None, output_field=DurationField()),
            schema_id=Subquery(schemas.values("id")[:1], output_field=IntegerField()),
            schema_version=Subquery(schemas.values("version")[:1], output_field=IntegerField()),
            schema_body=Subquery(schemas.values("schema")[:1], output_field=JSONField()),
            # The governing policy's current version (runs_app.policies), in the same statement.
            policy_id=Subquery(policies.values("id")[:1], output_field=IntegerField()),
            policy_version=Subquery(policies.values("version")[:1], output_field=IntegerField()),
            policy_quorum=Subquery(policies.values("required_approvals")[:1], output_field=IntegerField()),
            policy_expiry=Subquery(policies.values("expires_after")[:1], output_field=DurationField()),
            policy_on_expiry=Subquery(policies.values("on_expiry")[:1], output_field=CharField()),
            policy_always_ask=Subquery(policies.values("always_ask")[:1], output_field=BooleanField()),
            # Whether a standing approval could cover it (runs_app.services.standing_approvals): read only then.
            live_rule=Exists(live_rules(project.pk, tool, Now())),
        ).first()
        if run is None:
            raise NotFoundError(f"Run {run_id} does not exist.")
        if run.schema_id is not None:
            check_arguments(run.schema_body, arguments, version=run.schema_version, tool=tool)
        if (expires_at is None and run.policy_on_expiry != ExpiryAction.WAIT
                and (run.policy_expiry or run.default_expiry) is not None):
            # The policy's default wait, else the project's per-tool default (ApprovalExpiryDefault). A policy that
            # says "keep waiting" sets no deadline: only the agent's own `expires_at` would end the wait.
            expires_at = timezone.now() + (run.policy_expiry or run.default_expiry)
        if run.key_effect or run.key_approval:
            raise ConflictError(
                "This idempotency key already names a different action: approving this one could only end blocked.",
                code="idempotency_key_reused", current_status=run.status, current_version=run.version,
            )
        try:
            with transaction.atomic():
                approval = ApprovalRequest.objects.create(
                    project=project, run=run, tool=tool, arguments=arguments,
                    action_fingerprint=fingerprint, risk=risk,
                    idempotency_key=idempotency_key, reason=reason, requested_by=actor.label,
                    requested_by_token=actor.token, expires_at=expires_at, executor=executor,
                    tool_schema_id=run.schema_id, tool_schema_version=run.schema_version,
                    policy_id=run.policy_id, policy_version=run.policy_version,
                    approvals_required=run.policy_quorum or 1,
                )
        except IntegrityError:
            raise ConflictError(
                "This run already has a pending approval.", code="approval_pending",
                current_status=run.status, current_version=run.version,
            ) from None
        moved = run_transition(
            project=project, run_id=run_id, to=RunStatus.WAITING_APPROVAL, expected_version=expected_version,
            lease_owner=lease_owner, updates={"pending_approval": approval},
        )
        checkpoint_waiting(project=project, run=moved, waits_for=f"approval of {tool}", approval_id=approval.pk,
                           pending_gate={**(gate or {}), "tool": tool, "fingerprint": approval.action_fingerprint,
                                         "approval": approval.pk})
        run_event_append(
            project=project, run_id=run_id, kind="approval.requested",
            data={"approval": approval.pk, "tool": tool, "fingerprint": approval.action_fingerprint,
                  "executor": executor},
        )
        if run.live_rule and not run.policy_always_ask and (run.policy_quorum or 1) <= 1:
            decided = standing_approval_apply(approval=approval, run=moved)
            if decided is not None:  # approved in advance by a reviewer's rule: nobody needs telling
                run_event_append(
                    project=project, run_id=run_id, kind="approval.approved",
                    data={"approval": decided.pk,
                          "by": decided.decided_by.get_username() if decided.decided_by else "",
                          "fingerprint": decided.approved_fingerprint,
                          "standing_approval": decided.standing_approval_id})
                _enqueue_resume(run_id)
                return decided
        # Reviewers are told after commit (notify_app); decisions and run state changes owe their webhook
        # deliveries from triggers instead (notify_app 0002), at no statement on the decision's path.
        facts = {"project_id": project.pk, "approval_id": approval.pk, "run_id": run_id, "tool": tool,
                 "risk": risk, "fingerprint": fingerprint, "requested_by": actor.label}
        transaction.on_commit(lambda: approval_requested.send(sender=ApprovalRequest, **facts))
        return approval


def _expiry_default(project: Project, tool: str, risk: str) -> QuerySet[ApprovalExpiryDefault, Any]:
    """The project's default wait for this tool and risk, the most specific row first (read inside the run's
    statement: no round trip of its own)."""
    return (ApprovalExpiryDefault.objects.filter(project=project, tool__in=[tool, ""], risk__in=[risk, ""])
            .order_by(Case(When(tool="", then=Value(1)), default=Value(0)),
                      Case(When(risk="", then=Value(1)), default=Value(0)))
            .values("expires_after")[:1])


def _key_taken(
    project: Project, key: str, tool: str, arguments: Any, fingerprint: str
) -> tuple[QuerySet[ExternalEffect], QuerySet[ApprovalRequest]]:
    """What makes `key` name another action than (tool, arguments) in the project (issue 19, defect 2): an effect
    under it with another tool or arguments (executed, consumed or only intended: the worker's intent under the
    key would be refused as a reuse), or a live approval under it for another action (pending, or approved and
    not yet executed, with another fingerprint). The run's read checks both (one statement)."""
    effects = ExternalEffect.objects.filter(project=project, idempotency_key=key).exclude(
        tool=tool, arguments_digest=digest(arguments))
    approvals = ApprovalRequest.objects.filter(project=project, idempotency_key=key).filter(
        (Q(status=ApprovalStatus.PENDING) & ~Q(action_fingerprint=fingerprint))
        | (Q(status=ApprovalStatus.APPROVED) & ~Q(approved_fingerprint=fingerprint))
    )
    return effects, approvals


_NOT_A_REVIEWER = "Only reviewers of the approval's project decide it."


@dataclass(frozen=True)
class Decision:
    APPROVE = "approve"
    REJECT = "reject"


def approval_decide(
    *,
    project: Project | int | None = None,
    approval_id: int,
    actor: Actor,
    decision: str,
    reason: str = "",
    edited_arguments: dict[str, Any] | None = None,
    expected_version: int | None = None,
    expected_fingerprint: str | None = None,
    project_ids: Sequence[int] | None = None,
    reject_option: str = "",
) -> ApprovalRequest:
    """Record a reviewer's final decision and queue the run's resume.

    1. Only a person (not an agent or the worker) who holds the reviewer role in the approval's project may
       decide (harness.tenancy.decision_scope), never the one who asked, and not while the project is frozen:
       the role and the freeze are conditions of the write itself (acting_filter), so they cost no read. The
       approval is looked up in `project`, or, for a door that has the caller's scope already (the API),
       among `project_ids`, the projects the caller can see.
    2. Rejection needs a reason. Edit-and-approve needs one too (`reason_required`), and the edited arguments
       must match the tool's schema version the request was validated against, if it was (`arguments_invalid`
       naming the field); it records them and their new fingerprint. Plain approval records the requested
       action's fingerprint.
    3. One conditional UPDATE from pending, which also holds the checks that need the row (not the
       asker's own request, not expired, and, given `expected_fingerprint`, still the action the
       reviewer was shown), so a decision reads nothing first (an edit reads the tool its
       fingerprint covers); only a refused write reads the row, to say why. Of two reviewers deciding at
       once, one stands and the other gets a conflict that names who decided.
    4. Audit the decision and enqueue the resume after commit (a rejection resumes the run too).

    `reject_option`: for a rejection, one of the reject options the request's policy version declares (400
    `reject_option_invalid` otherwise; nothing written). It is recorded on the request, in the audit entry, the
    run's event, the webhook and the decision bound to the run, with the option's text for the agent
    (runs_app.policies.reject_option_of), so the agent can change course.

    The decision is three statements (the write, the audit entry, the run's event), plus, once per
    request's user, the reads of its groups and memberships (harness.tenancy).
    """
    user, visible = decision_scope(
        ApprovalRequest.objects.all(), actor_user=actor.user, role=Role.REVIEWER, project=project,
        project_ids=project_ids,
        missing=f"Approval {approval_id} does not exist.", refused=_NOT_A_REVIEWER, code="not_a_reviewer")
    if decision not in (Decision.APPROVE, Decision.REJECT):
        raise ValidationFailed("decision is 'approve' or 'reject'.", code="invalid")
    now = timezone.now()
    if decision == Decision.REJECT and not reason.strip():
        raise ValidationFailed("A rejection needs a reason.", code="reason_required")
    to = ApprovalStatus.REJECTED if decision == Decision.REJECT else ApprovalStatus.APPROVED
    updates = decision_updates(user, now, reason.strip(), to)
    if reject_option:
        updates["reject_option"] = _checked_reject_option(visible, approval_id, reject_option, to)
    if to == ApprovalStatus.APPROVED and edited_arguments is not None:  # the edited action and its fingerprint
        if not reason.strip():
            raise ValidationFailed("Edited arguments need a reason: say why they changed.", code="reason_required",
                                   field="reason")
        asked = visible.filter(pk=approval_id).values_list(
            "tool", "arguments", "tool_schema_version", "tool_schema__schema").first()
        if asked is None:
            raise NotFoundError(f"Approval {approval_id} does not exist.")
        tool, requested, schema_version, schema = asked
        if schema_version is not None:  # validated against the version the request was
            check_arguments(schema, edited_arguments, version=schema_version, tool=tool)
        updates["approved_arguments"] = edited_arguments
        updates["approved_fingerprint"] = action_fingerprint(tool, edited_arguments)
        # What changed, as the audit entry, the webhook and every page show it (one function for all of them).
        updates["arguments_changes"] = arguments_diff(requested, edited_arguments).as_data()
    # The action this decision approves (an edit is another action): what a quorum's votes are counted for.
    approving = updates.get("approved_fingerprint") if edited_arguments is not None else None
    with transaction.atomic():
        approval = None
        if edited_arguments is None and not reject_option:  # the usual decision: one prepared statement
            approval = _decide_prepared(
                approval_id=approval_id, to=to, user=user, actor=actor, now=now, reason=updates["decision_reason"],
                project_ids=project_ids if project_ids is not None else [_project_pk(project)],
                expected_version=expected_version, expected_fingerprint=expected_fingerprint)
        if approval is None:  # an edit, a reject option, or a write the prepared statement refused: the ORM's
            # The role and the freeze (acting_filter), and the policy's eligible reviewers (runs_app.policies): built
            # only here, since compiling these filters was half of a prepared decision's CPU (issue 35).
            approvals = visible.filter(acting_filter(user, Role.REVIEWER)).filter(may_decide(user))
            try:
                approval = _decide_orm(approvals, approval_id=approval_id, to=to, actor=actor, user=user, now=now,
                                       updates=updates, expected_version=expected_version,
                                       expected_fingerprint=expected_fingerprint, approving=approving)
            except (ConflictError, NotFoundError) as exc:
                refusal = _refusal(visible, approval_id, actor, now, exc, expected_fingerprint,
                                   to=to, expected_version=expected_version)
                if not isinstance(refusal, QuorumPending):
                    raise refusal from None
                # Every guard holds but the quorum: this approval is one vote of the N the policy asks.
                return quorum_vote(approvals, approval_id=approval_id, actor=actor, user=user,
                                   reason=updates["decision_reason"], expected_version=expected_version,
                                   row_guards=decidable(actor, now, expected_fingerprint),
                                   fingerprint=approving or refusal.fingerprint,
                                   arguments=edited_arguments, changes=updates.get("arguments_changes"))
        approval.decided_by = user
        votes = vote_record(approval, user=user, reason=approval.decision_reason,
                            arguments=edited_arguments) if to == ApprovalStatus.APPROVED else []
        audit_record(
            project=approval.project_id, actor=actor, action=f"approval.{to}", target=approval,
            data={
                "reason": approval.decision_reason,
                "requested_fingerprint": approval.action_fingerprint,
                "approved_fingerprint": approval.approved_fingerprint,
                "edited": edited_arguments is not None,
                "changes": approval.arguments_changes,
                **({"reject_option": approval.reject_option} if approval.reject_option else {}),
                **({"votes": votes, "policy_version": approval.policy_version} if votes else {}),
            },
        )
        run_event_append(
            project=approval.project_id, run_id=approval.run_id, kind=f"approval.{to}",
            data={"approval": approval.pk, "by": user.get_username(), "fingerprint": approval.approved_fingerprint,
                  **({"reject_option": approval.reject_option} if approval.reject_option else {})},
        )
        _enqueue_resume(approval.run_id)
        return approval


def _checked_reject_option(visible: QuerySet[ApprovalRequest], approval_id: int, option: str, to: str) -> str:
    """`option` if it is one of the reject options of the request's policy version (read in one statement)."""
    if to != ApprovalStatus.REJECTED:
        raise ValidationFailed("A reject option goes with a rejection.", code="reject_option_invalid",
                               field="reject_option")
    declared = next(iter(visible.filter(pk=approval_id).values_list("policy__reject_options", flat=True)), None)
    if declared_reject_option(declared, option) is None:
        names = [o.get("name") for o in declared or [] if isinstance(o, dict)]
        raise ValidationFailed(
            f"{option!r} is not a reject option of this request's policy"
            + (f" (one of {', '.join(map(str, names))})." if names else " (it declares none)."),
            code="reject_option_invalid", field="reject_option")
    return option


def _decide_orm(
    approvals: QuerySet[ApprovalRequest], *, approval_id: int, to: str, actor: Actor, user: Any, now: dt.datetime,
    updates: dict[str, Any], expected_version: int | None, expected_fingerprint: str | None,
    approving: str | None = None,
) -> ApprovalRequest:
    """The decision's write as the transition table's one conditional UPDATE (`cas_transition_row`): `approvals`
    already narrowed to the caller's scope, `acting_filter` and `may_decide`, plus what needs the row
    (`decidable`) and, for an approval, the policy's quorum (`quorum_reached`: the other reviewers' votes for
    the action approved, `approving`, or the requested one). The statement `_decide_prepared` writes by hand is
    held to this one (tests/runs_app/test_fast_sql_differential.py)."""
    condition = decidable(actor, now, expected_fingerprint)
    if to == ApprovalStatus.APPROVED:
        condition &= quorum_reached(user, approving)
    return cas_transition_row(approvals, pk=approval_id, machine=APPROVAL_MACHINE, to=to,
                              expected_version=expected_version, extra_filter=condition, updates=updates)


def decidable(actor: Actor, now: dt.datetime, expected_fingerprint: str | None) -> Q:
    """The guards of a decision that need the approval's row: not the asker's own request, not expired, and, given
    `expected_fingerprint`, still the action the reviewer was shown."""
    condition = ~Q(requested_by=actor.label) & (Q(expires_at__isnull=True) | Q(expires_at__gt=now))
    if expected_fingerprint is not None:
        condition &= Q(action_fingerprint=expected_fingerprint)
    return condition


def _project_pk(project: Project | int | None) -> int:
    if project is None:  # decision_scope refused this already
        raise ValueError("a decision needs the project or the caller's project_ids")
    return project if isinstance(project, int) else project.pk


def _decide_prepared(
    *, approval_id: int, to: str, user: Any, actor: Actor, now: dt.datetime, reason: str, project_ids: Sequence[int],
    expected_version: int | None, expected_fingerprint: str | None,
) -> ApprovalRequest | None:
    """`approval_decide`'s write without an edit, as one prepared statement: the same conditional UPDATE the ORM
    compiles from `cas_transition_row` with the decision's filters (the approval among `project_ids`, a legal
    source state for `to`, the expected version and fingerprint when given, not the asker's own request, not
    expired, `may_decide`: the user among the policy's eligible groups or the group it was escalated to, the
    quorum for an approval (`quorum_reached`), and `acting_filter`: the project not frozen and, unless the user
    holds the role everywhere, a membership of the user that names it), and the same values. The written row, or
    None when it matched nothing: the caller then runs the ORM's write, which explains the refusal (or, if the
    row changed in between, decides it the same way; a quorum not reached yet is a vote). Compiling that UPDATE
    was half of a decision's CPU (issue 14)."""
    return fetch_instance(ApprovalRequest, _DECIDE_SQL[to == ApprovalStatus.APPROVED], {
        "to": to, "user": user.pk, "now": now, "reason": reason, "updated": timezone.now(), "id": approval_id,
        "projects": list(project_ids), "sources": sorted(APPROVAL_MACHINE.sources_of(to)),
        "version": expected_version, "label": actor.label, "fingerprint": expected_fingerprint,
        "everywhere": holds_role_everywhere(user, Role.REVIEWER), "role": [Role.REVIEWER],
    })


_DECIDE_WHERE = """
 WHERE a.id = %(id)s AND a.project_id = ANY(%(projects)s::bigint[]) AND a.status = ANY(%(sources)s::varchar[])
   AND (%(version)s::integer IS NULL OR a.version = %(version)s::integer)
   AND NOT (a.requested_by = %(label)s) AND (a.expires_at IS NULL OR a.expires_at > %(now)s)
   AND (%(fingerprint)s::varchar IS NULL OR a.action_fingerprint = %(fingerprint)s::varchar)
   AND ((a.routed_group_id IS NULL
         AND (NOT EXISTS (SELECT 1 FROM runs_app_approvalpolicy_eligible_groups g
                           WHERE g.approvalpolicy_id = a.policy_id)
              OR EXISTS (SELECT 1 FROM runs_app_approvalpolicy_eligible_groups g
                           JOIN runs_app_reviewergroup_members gm ON gm.reviewergroup_id = g.reviewergroup_id
                          WHERE g.approvalpolicy_id = a.policy_id AND gm.user_id = %(user)s)))
        OR EXISTS (SELECT 1 FROM runs_app_reviewergroup_members gm
                    WHERE gm.reviewergroup_id = a.routed_group_id AND gm.user_id = %(user)s))
   AND (%(to)s <> 'approved' OR a.approvals_required <= 1
        OR a.approvals_required <= 1 + (SELECT count(DISTINCT v.user_id) FROM runs_app_approvalvote v
                                         WHERE v.approval_id = a.id AND v.fingerprint = a.action_fingerprint
                                           AND v.user_id <> %(user)s))
   AND a.project_id IN (
       SELECT p.id FROM harness_project p
        WHERE p.frozen_at IS NULL
          AND (%(everywhere)s::boolean OR EXISTS (
              SELECT 1 FROM harness_membership m
               WHERE m.project_id = p.id AND m.user_id = %(user)s AND m.roles @> %(role)s::varchar[])))
"""
_DECIDE_SET = """UPDATE runs_app_approvalrequest a
   SET status = %(to)s, version = a.version + 1, decided_by_id = %(user)s, decided_at = %(now)s,
       decision_reason = %(reason)s, updated_at = %(updated)s"""
# [rejection, approval]: an approval also records the requested action as the approved one.
_DECIDE_SQL = (
    _DECIDE_SET + _DECIDE_WHERE + returning(ApprovalRequest),
    _DECIDE_SET + ", approved_arguments = a.arguments, approved_fingerprint = a.action_fingerprint"
    + _DECIDE_WHERE + returning(ApprovalRequest),
)


def _refusal(
    approvals: QuerySet[ApprovalRequest], approval_id: int, actor: Actor, now: dt.datetime,
    exc: ConflictError | NotFoundError, expected_fingerprint: str | None = None, *, to: str = "",
    expected_version: int | None = None,
) -> Exception:
    """Why a decision's write was refused, read after it: in the order the checks were always made. When the only
    guard that does not hold is an approval's quorum, QuorumPending: the caller records a vote instead."""
    current = approvals.select_related("decided_by").filter(pk=approval_id).first()
    if current is None:
        return NotFoundError(f"Approval {approval_id} does not exist.")
    scope_refusal = decision_refusal(actor.user, Role.REVIEWER, current.project_id, refused=_NOT_A_REVIEWER,
                                     code="not_a_reviewer")
    if scope_refusal is not None:  # the project is frozen, or the user does not review in it
        return scope_refusal
    if current.requested_by == actor.label:
        return Forbidden("Nobody approves their own request.", code="self_approval")
    if not approvals.filter(pk=approval_id).filter(may_decide(actor.user)).exists():
        return Forbidden("The approval's policy routes it to reviewers you are not among.", code="not_eligible")
    if current.status == ApprovalStatus.PENDING and current.expires_at and current.expires_at <= now:
        return ConflictError("This approval has expired.", code="approval_expired", current_status="pending")
    if current.status == ApprovalStatus.EXPIRED:
        # The expiry landed first (the recovery pass racing this decision, experiment 22): the same answer as a
        # decision made after the deadline, not an illegal expired -> approved transition.
        return ConflictError("This approval has expired.", code="approval_expired", current_status="expired",
                             current_version=current.version)
    if expected_fingerprint is not None and current.action_fingerprint != expected_fingerprint:
        return ConflictError(
            "The action is not the one shown: its fingerprint changed.", code="fingerprint_changed",
            current_status=current.status, current_version=current.version,
        )
    if (to == ApprovalStatus.APPROVED and current.status == ApprovalStatus.PENDING and current.approvals_required > 1
            and expected_version in (None, current.version)):
        return QuorumPending(current.action_fingerprint)
    if isinstance(exc, ConflictError) and current.decided_by is not None:
        exc.extra["decided_by"] = current.decided_by.get_username()
        exc.extra["decided_at"] = current.decided_at.isoformat() if current.decided_at else None
        exc.detail = f"Already {current.status} by {current.decided_by.get_username()}."
        exc.code = "already_decided"
    return exc


def approval_expire_due(*, now: dt.datetime | None = None) -> list[int]:
    """Expire pending approvals past their deadline; their runs resume (a worker's approval into
    `blocked`, an agent's with the expiry bound, back to the agent). A request whose policy escalates and that
    was not escalated yet is routed to the escalation group instead (runs_app.services.approval_escalation), and
    its run keeps waiting."""
    now = now or timezone.now()
    expired: list[int] = []
    for approval_id, project_id, run_id, on_expiry, escalated_at in ApprovalRequest.objects.filter(
        status=ApprovalStatus.PENDING, expires_at__lte=now
    ).exclude(run_id__in=imported_ids("run")).values_list(  # an imported run's approvals are read-only
        "pk", "project_id", "run_id", "policy__on_expiry", "escalated_at"
    ):
        with transaction.atomic():
            if on_expiry == ExpiryAction.ESCALATE and escalated_at is None:
                approval_escalate(approval_id=approval_id, now=now)
                continue
            try:
                approval_expire(project=project_id, approval_id=approval_id, run_id=run_id)
            except ConflictError:
                continue
            _enqueue_resume(run_id)
            expired.append(approval_id)
    return expired


def approval_expire(*, project: Project | int, approval_id: int, run_id: int) -> ApprovalRequest:
    """Move one pending approval to `expired` (a ConflictError if it is no longer pending) and log it
    on its run; call inside the caller's transaction. The resume worker calls it for an approval it
    finds past its deadline, the recovery pass (`approval_expire_due`) for every one."""
    approval = cas_transition_row(
        ApprovalRequest.objects.filter(project=project), pk=approval_id, machine=APPROVAL_MACHINE,
        to=ApprovalStatus.EXPIRED, expected_version=None,
    )
    run_event_append(project=project, run_id=run_id, kind="approval.expired", data={"approval": approval_id})
    return approval


def _enqueue_resume(run_id: int) -> None:
    """Ask for the resume once the transaction commits (the worker listens: runs_app.signals); the
    recovery pass catches a lost message."""
    transaction.on_commit(lambda: resume_requested.send(sender=Run, run_id=run_id))

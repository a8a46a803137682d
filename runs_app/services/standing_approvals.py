"""Standing approvals (issue 33, part 2): "approve and don't ask again", as a reviewer's time-boxed, audited rule.

A reviewer says: approve tool T, for this agent / session / run (each optional), when the arguments match (exact
values of some keys, and/or a JSON Schema), until a time, at most K times. A request that matches is approved by
the rule the moment it is asked (approval_request_create calls `standing_approval_apply`), the approval names the
rule, and its decider is the rule's author: the decision was theirs, made in advance. Everything else about the
approval stays as it is for a person's decision: the fingerprint, the audit entry, the resume's re-checks.

What a rule can never do:
- cover a tool whose policy says "always ask", or one whose policy asks for more than one approval (a quorum
  is N people looking at this request; one person's rule is not N);
- approve a request its author could not approve by hand: the author must still review in the project, be
  eligible under the tool's policy (runs_app.policies.may_decide) and not be the one who asked; these are
  conditions of the decision's own write, as for a person's decision;
- outlive its revocation: the resume re-checks that the rule still stands (not revoked, not past its time)
  when it starts (worker.steps.authority_lease). A rule revoked between the approval and the resume leaves the
  approved action unrun (its outcome says why) and asks a person again, with a new pending approval of the
  same action: decisions stay final (DESIGN.md, "State machines"), the run waits for a person.

A rule's uses are taken by the approvals it makes (one conditional UPDATE: `uses < max_uses`), so K uses approve
K requests, and the next one waits for a person.
"""

import datetime as dt
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.models import Project
from harness.tenancy import Role, acting_filter, user_can_see_project, user_has_role
from harness.transitions import cas_transition_row
from runs_app.machines import APPROVAL_MACHINE
from runs_app.models import (
    ApprovalOutcome,
    ApprovalRequest,
    ApprovalStatus,
    Run,
    RunStatus,
    StandingApproval,
)
from runs_app.policies import may_decide, policy_for
from runs_app.services.approval_writes import decision_updates
from runs_app.tool_schemas import argument_errors, schema_problem
from sessions_app.models import Session

# A rule is time-boxed: at most this long, and at most this many uses.
MAX_LIFETIME = dt.timedelta(days=30)
MAX_USES = 1000


def live_rules(project_id: int, tool: str, now: Any = None) -> QuerySet[StandingApproval]:
    """The project's rules for `tool` that could approve a request now: not revoked, not past their time, uses
    left. `now` may be an expression (`Now()`) for a subquery."""
    return StandingApproval.objects.filter(project_id=project_id, tool=tool, revoked_at__isnull=True,
                                           expires_at__gt=now or timezone.now(), uses__lt=F("max_uses"))


def standing_approval_create(
    *, project: Project | int, actor: Actor, tool: str, max_uses: int, expires_at: dt.datetime | None = None,
    expires_in: dt.timedelta | None = None, agent: str = "", session_id: int | None = None, run_id: int | None = None,
    match_arguments: dict[str, Any] | None = None, match_schema: dict[str, Any] | None = None, reason: str = "",
) -> StandingApproval:
    """Create a rule, audited (`standing_approval.created`).

    Only a person who reviews in the project creates one (an agent: 403 `not_a_person`; a person without the
    reviewer role there: 403 `not_a_reviewer`; another project: 404), and only one they could use by hand: when
    the tool's policy names eligible groups, they are in one (403 `not_eligible`). Never for a tool whose policy
    says always ask (409 `always_ask`) or asks for a quorum (409 `quorum_policy`). Time-boxed: `expires_at` (or
    `expires_in` from now) in the future and at most 30 days ahead, 1 to 1,000 uses (400 `invalid` naming the
    field). `agent` names an agent ("writer-1" or "agent:writer-1"); the session and run must be the project's.
    `match_schema` is a JSON Schema the arguments must also match (on top of the tool's own schema, which every
    request is checked against: the rule can only narrow it)."""
    project_id = project if isinstance(project, int) else project.pk
    user = _reviewer_of(actor, project_id, doing="create standing approvals")
    tool = tool.strip()
    if not tool:
        raise ValidationFailed("A standing approval names its tool.", code="invalid", field="tool")
    now = timezone.now()
    if expires_at is None and expires_in is not None:
        expires_at = now + expires_in
    if expires_at is None or expires_at <= now:
        raise ValidationFailed("A standing approval ends at a time in the future.", code="invalid",
                               field="expires_at")
    if expires_at > now + MAX_LIFETIME:
        raise ValidationFailed("A standing approval lasts at most 30 days.", code="invalid", field="expires_at")
    if isinstance(max_uses, bool) or not isinstance(max_uses, int) or not 1 <= max_uses <= MAX_USES:
        raise ValidationFailed(f"max_uses is 1 to {MAX_USES}.", code="invalid", field="max_uses")
    if match_arguments is not None and not isinstance(match_arguments, dict):
        raise ValidationFailed("match_arguments is an object of argument names and their exact values.",
                               code="invalid", field="match_arguments")
    if match_schema is not None:
        problem = schema_problem(match_schema)
        if problem:
            raise ValidationFailed(problem, code="invalid", field="match_schema")
    policy = policy_for(project_id, tool)
    if policy is not None and policy.always_ask:
        raise ConflictError(f"{tool}'s policy says always ask: a person decides every request.", code="always_ask")
    if policy is not None and policy.required_approvals > 1:
        raise ConflictError(f"{tool}'s policy asks for {policy.required_approvals} approvals: one person's rule "
                            "cannot stand for them.", code="quorum_policy")
    groups = list(policy.eligible_groups.values_list("pk", flat=True)) if policy is not None else []
    if groups and not user.reviewer_groups.filter(pk__in=groups).exists():
        raise Forbidden(f"{tool}'s policy routes its requests to reviewers you are not among.", code="not_eligible")
    if session_id is not None and not Session.objects.filter(project_id=project_id, pk=session_id).exists():
        raise NotFoundError(f"Session {session_id} does not exist.")
    if run_id is not None and not Run.objects.filter(project_id=project_id, pk=run_id).exists():
        raise NotFoundError(f"Run {run_id} does not exist.")
    agent = agent.strip()
    if agent and not agent.startswith("agent:"):
        agent = f"agent:{agent}"
    with transaction.atomic():
        rule = StandingApproval.objects.create(
            project_id=project_id, tool=tool, created_by=user, agent=agent, session_id=session_id, run_id=run_id,
            match_arguments=match_arguments or {}, match_schema=match_schema, expires_at=expires_at,
            max_uses=max_uses, reason=reason.strip())
        audit_record(project=project_id, actor=actor, action="standing_approval.created", target=rule,
                     data={"tool": tool, "agent": agent, "session": session_id, "run": run_id,
                           "match_arguments": rule.match_arguments, "match_schema": match_schema,
                           "expires_at": expires_at.isoformat(), "max_uses": max_uses,
                           "policy_version": policy.version if policy is not None else None})
    return rule


def standing_approval_revoke(*, project: Project | int, rule_id: int, actor: Actor) -> StandingApproval:
    """Revoke a rule at once, audited (`standing_approval.revoked`): from this write on it approves nothing, and an
    approval it made whose run has not resumed yet is asked of a person again when the resume starts. Any reviewer
    of the project may revoke (stopping a rule is always safe); revoked already: 409 `already_revoked`."""
    project_id = project if isinstance(project, int) else project.pk
    user = _reviewer_of(actor, project_id, doing="revoke standing approvals")
    now = timezone.now()
    with transaction.atomic():
        moved = StandingApproval.objects.filter(project_id=project_id, pk=rule_id, revoked_at__isnull=True).update(
            revoked_at=now, revoked_by=user)
        # Read once after the write, with what its answer shows (the API serializes it as it is).
        rule = (StandingApproval.objects.filter(project_id=project_id, pk=rule_id)
                .select_related("project", "created_by", "revoked_by").first())
        if rule is None:
            raise NotFoundError(f"Standing approval {rule_id} does not exist.")
        if not moved:
            by = rule.revoked_by.get_username() if rule.revoked_by else "someone"
            raise ConflictError(f"Standing approval {rule_id} was revoked already, by {by}.", code="already_revoked",
                                revoked_at=rule.revoked_at.isoformat() if rule.revoked_at else None)
        audit_record(project=project_id, actor=actor, action="standing_approval.revoked", target=rule,
                     data={"tool": rule.tool, "uses": rule.uses, "max_uses": rule.max_uses})
    return rule


def rule_matches(rule: StandingApproval, *, requested_by: str, session_id: int, run_id: int,
                 arguments: Any) -> bool:
    """Whether the request (who asked, in which session and run, with which arguments) is one the rule covers."""
    if rule.agent and rule.agent != requested_by:
        return False
    if rule.session_id is not None and rule.session_id != session_id:
        return False
    if rule.run_id is not None and rule.run_id != run_id:
        return False
    if not isinstance(arguments, dict):
        return False
    if any(key not in arguments or arguments[key] != value for key, value in (rule.match_arguments or {}).items()):
        return False
    return rule.match_schema is None or not argument_errors(rule.match_schema, arguments)


def standing_approval_apply(*, approval: ApprovalRequest, run: Run) -> ApprovalRequest | None:
    """Approve the just-created pending `approval` by the first live rule that covers it, or None (none does:
    a person decides). Call in the request's transaction, after the run moved to waiting_approval.

    For each candidate, in a savepoint: take one of its uses (a conditional UPDATE, so K uses approve K requests
    however many ask at once), then write the decision as a person's would be written (the same transition,
    `decision_updates`, and the author's role, eligibility and not-the-asker as conditions of the write); either
    refused, the savepoint is rolled back and the use given back. The audit entry is the author's
    `approval.approved`, naming the rule."""
    now = timezone.now()
    for rule in live_rules(approval.project_id, approval.tool, now).select_related("created_by").order_by("pk"):
        if not rule_matches(rule, requested_by=approval.requested_by, session_id=run.session_id, run_id=run.pk,
                            arguments=approval.arguments):
            continue
        author = rule.created_by
        try:
            with transaction.atomic():
                if not live_rules(approval.project_id, approval.tool, now).filter(pk=rule.pk).update(
                        uses=F("uses") + 1):
                    continue  # its last use went to another request just now
                label = Actor.for_user(author).label
                decided = cas_transition_row(
                    ApprovalRequest.objects.filter(project_id=approval.project_id), pk=approval.pk,
                    machine=APPROVAL_MACHINE, to=ApprovalStatus.APPROVED, expected_version=None,
                    extra_filter=acting_filter(author, Role.REVIEWER) & may_decide(author)
                    & ~Q(requested_by=label) & Q(approvals_required__lte=1),
                    updates={**decision_updates(author, now, f"standing approval {rule.pk}: {rule.reason}".strip(),
                                                ApprovalStatus.APPROVED),
                             "standing_approval_id": rule.pk})
        except (ConflictError, NotFoundError):
            continue
        decided.decided_by = author
        audit_record(project=approval.project_id, actor=Actor.for_user(author), action="approval.approved",
                     target=decided,
                     data={"reason": decided.decision_reason, "requested_fingerprint": decided.action_fingerprint,
                           "approved_fingerprint": decided.approved_fingerprint, "edited": False, "changes": [],
                           "standing_approval": rule.pk, "use": rule.uses + 1, "max_uses": rule.max_uses})
        return decided
    return None


def rule_lapse(revoked_at: dt.datetime | None, expired: bool, rule_id: int | None) -> str:
    """Why the standing approval behind an approval no longer stands ("" when it does, or there is none)."""
    if rule_id is None:
        return ""
    if revoked_at is not None:
        return f"standing approval {rule_id} was revoked at {revoked_at.isoformat()}"
    if expired:
        return f"standing approval {rule_id} ran out of time"
    return ""


def approval_ask_again(*, approval: ApprovalRequest, run: Run, why: str, actor: Actor) -> ApprovalRequest | None:
    """The resume's answer to an approval whose standing approval no longer stands (`why`): the approved action is
    not run (the approval's outcome says so and why: its decision stays final), and the same action is asked of a
    person as a new pending approval, which the run now waits on (with a waiting checkpoint bound to it, as for
    any request), audited (`approval.asked_again`) and announced to reviewers like a new request. None when the run
    moved on in between (someone cancelled it): nothing is written then. Call inside the resume's transaction."""
    from runs_app.services.checkpoints import checkpoint_waiting
    from runs_app.services.runs import run_event_append
    from runs_app.signals import approval_requested

    now = timezone.now()
    policy = approval.policy if approval.policy_id is not None else None
    wait = policy.expires_after if policy is not None else None
    expires_at = now + wait if wait else (approval.expires_at if approval.expires_at and approval.expires_at > now
                                           else None)
    with transaction.atomic():
        if not ApprovalRequest.objects.filter(pk=approval.pk, status=ApprovalStatus.APPROVED,
                                              outcome=ApprovalOutcome.UNREPORTED).update(
                outcome=ApprovalOutcome.NOT_RUN, outcome_reason=f"not run: {why}", outcome_at=now, updated_at=now):
            return None
        again = ApprovalRequest.objects.create(
            project_id=approval.project_id, run_id=approval.run_id, tool=approval.tool, arguments=approval.arguments,
            action_fingerprint=approval.action_fingerprint, risk=approval.risk,
            idempotency_key=approval.idempotency_key, reason=approval.reason, requested_by=approval.requested_by,
            requested_by_token_id=approval.requested_by_token_id, expires_at=expires_at, executor=approval.executor,
            tool_schema_id=approval.tool_schema_id, tool_schema_version=approval.tool_schema_version,
            policy_id=approval.policy_id, policy_version=approval.policy_version,
            approvals_required=approval.approvals_required)
        moved = Run.objects.filter(pk=run.pk, status=RunStatus.WAITING_APPROVAL, pending_approval_id=approval.pk
                                   ).update(pending_approval=again, version=F("version") + 1, updated_at=now)
        if not moved:
            transaction.set_rollback(True)
            return None
        run.refresh_from_db()
        checkpoint_waiting(project=approval.project_id, run=run, waits_for=f"approval of {approval.tool}",
                           approval_id=again.pk, pending_gate={"tool": approval.tool, "approval": again.pk,
                                                               "fingerprint": again.action_fingerprint})
        audit_record(project=approval.project_id, actor=actor, action="approval.asked_again", target=again,
                     data={"previous": approval.pk, "standing_approval": approval.standing_approval_id, "why": why})
        run_event_append(project=approval.project_id, run_id=run.pk, kind="approval.asked_again",
                         data={"approval": again.pk, "previous": approval.pk, "why": why})
        facts = {"project_id": approval.project_id, "approval_id": again.pk, "run_id": run.pk, "tool": again.tool,
                 "risk": again.risk, "fingerprint": again.action_fingerprint, "requested_by": again.requested_by}
        transaction.on_commit(lambda: approval_requested.send(sender=ApprovalRequest, **facts))
    return again


def _reviewer_of(actor: Actor, project_id: int, *, doing: str) -> User:
    """The person acting, who reviews in the project: an agent, 403 `not_a_person` (it never approves its own
    requests in advance); a project the person cannot see, 404; without the reviewer role there, 403."""
    if not actor.is_user or actor.user is None or not actor.user.is_active:
        raise Forbidden(f"Only a person may {doing}: an agent never approves its own requests in advance.",
                        code="not_a_person")
    if not user_can_see_project(actor.user, project_id):
        raise NotFoundError("This project does not exist.")
    if not user_has_role(actor.user, Role.REVIEWER, project_id):
        raise Forbidden(f"Only reviewers of this project {doing}.", code="not_a_reviewer")
    return actor.user


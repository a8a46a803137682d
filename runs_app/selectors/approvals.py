"""Reads of approval requests: the API's list and one, the decision page's approval with what a reviewer
decides on (the session's recent items, the resume's trace after the decision), and the inbox by seeking.

Every read a door makes takes `project_ids`, the ids of the projects the caller may see (the API's
`harness.http.api_base.scope`, the console's `harness.http.views.project_ids`), and starts from the model's
`for_projects`: another project's object is simply absent (NotFoundError: a 404 at every door).
"""

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, F, QuerySet

from harness.http.errors import NotFoundError
from harness.tenancy import EndUserScope
from runs_app.models import ApprovalRequest, ApprovalStatus, ApprovalVote, Run, RunEvent
from runs_app.selectors.paging import MAX_SEEK_BRANCHES, capped_count, parse_seek_cursor, seek_window
from sessions_app.models import SessionItem
from sessions_app.trimming import APPROVAL_PAGE_ITEMS


def approval_list(*, project_ids: Sequence[int], end_user: EndUserScope | None = None
                  ) -> QuerySet[ApprovalRequest]:
    """The caller's approval requests: of its projects and, for a narrowed token, of its end user's runs only."""
    approvals = ApprovalRequest.objects.for_projects(project_ids).select_related("project", "decided_by")
    return end_user.hanging_off(approvals, "run__session") if end_user is not None else approvals


def approval_get(*, project_ids: Sequence[int], approval_id: int, end_user: EndUserScope | None = None
                 ) -> ApprovalRequest:
    approval = approval_list(project_ids=project_ids, end_user=end_user).filter(pk=approval_id).first()
    if approval is None:
        raise NotFoundError(f"Approval {approval_id} does not exist.")
    return approval


def approval_for_decision(*, project_ids: Sequence[int], approval_id: int) -> ApprovalRequest:
    """An approval with what a reviewer decides on: its run, session, latest checkpoint and task."""
    approval = (
        ApprovalRequest.objects.for_projects(project_ids).filter(pk=approval_id)
        .select_related("project", "run", "run__session", "run__last_checkpoint", "run__task", "decided_by",
                        "assigned_to", "tool_schema", "policy", "routed_group")
        .first()
    )
    if approval is None:
        raise NotFoundError(f"Approval {approval_id} does not exist.")
    return approval


Refine = Callable[[QuerySet[ApprovalRequest]], QuerySet[ApprovalRequest]]


def approval_inbox_unfiltered(queryset: QuerySet[ApprovalRequest]) -> QuerySet[ApprovalRequest]:
    return queryset


def approval_inbox(
    *, project_ids: Sequence[int], refine: Refine = approval_inbox_unfiltered
) -> QuerySet[ApprovalRequest]:
    """Pending approvals, oldest first (the one waiting longest is the most urgent), narrowed by
    `refine` (the page's ApprovalInboxFilter)."""
    pending = ApprovalRequest.objects.for_projects(project_ids).filter(status=ApprovalStatus.PENDING)
    return (refine(pending).select_related("project", "run", "run__session", "assigned_to", "routed_group")
            .order_by("created_at", "id"))


def pending_count(*, project_ids: Sequence[int], refine: Refine = approval_inbox_unfiltered) -> int:
    """How many approvals the inbox lists (`approval_inbox`), capped (paging.capped_count): the one count of
    pending approvals. The overview's tile, the navigation's badge and the inbox's own header all call this,
    over the projects each shows, so they cannot disagree on what "pending" means (issue 32)."""
    return capped_count(approval_inbox(project_ids=project_ids, refine=refine))


INBOX_PAGE_SIZE = 50


@dataclass(frozen=True)
class InboxPage:
    """A window of the inbox with the cursors of its neighbours (None: nothing there)."""

    object_list: list[ApprovalRequest]
    newer: str | None
    older: str | None
    # Of each row under a quorum policy: how many reviewers approved its requested action so far.
    votes: dict[int, int] = field(default_factory=dict)


def _seek(qs: QuerySet[ApprovalRequest], cursor: tuple[dt.datetime, int] | None, backwards: bool
          ) -> QuerySet[ApprovalRequest]:
    if cursor is not None:
        op = "<" if backwards else ">"
        # A row comparison the ORM cannot spell. S610: the operator is one of two literals, the values bound.
        qs = qs.extra(  # noqa: S610
            where=[f"(runs_app_approvalrequest.created_at, runs_app_approvalrequest.id) {op} (%s, %s)"],
            params=list(cursor))
    return qs.order_by(*(("-created_at", "-id") if backwards else ("created_at", "id")))


def inbox_page(
    *, project_ids: Sequence[int], refine: Refine = approval_inbox_unfiltered, after: str | None = None,
    before: str | None = None,
) -> InboxPage:
    """One window of INBOX_PAGE_SIZE pending approvals (`approval_inbox` with `refine`), by seeking.

    The list is oldest first: `after` is the next (newer) window, `before` the previous (older) one.
    1. Per project, seek in the (project, created_at, id) index of pending approvals from the cursor
       for one row more than a window (`project_id IN (a, b)` cannot be read from that index in
       time order: PostgreSQL would sort every pending approval of those projects).
    2. Merge those in one UNION statement; fetch the window's rows with their run and session.
    3. The extra row says whether there is more in the direction of travel; a cursor says there is
       something on the side it came from.
    """
    backwards = before is not None and after is None
    cursor = parse_seek_cursor(before if backwards else after)
    limit = INBOX_PAGE_SIZE + 1
    order = ("-created_at", "-id") if backwards else ("created_at", "id")
    if not project_ids or len(project_ids) > MAX_SEEK_BRANCHES:
        rows = list(_seek(approval_inbox(project_ids=project_ids, refine=refine), cursor, backwards)[:limit])
    else:
        # Each branch names its own project (not the IN list), so its row estimate is that project's.
        branches = [_seek(approval_inbox(project_ids=[p], refine=refine), cursor, backwards)
                    .values_list("id", "created_at")[:limit] for p in project_ids]
        picked = list(branches[0].union(*branches[1:], all=True).order_by(*order)[:limit]
                      if len(branches) > 1 else branches[0])
        found = approval_inbox(project_ids=project_ids, refine=refine).in_bulk([pk for pk, _ in picked])
        rows = [found[pk] for pk, _ in picked if pk in found]
    rows, newer, older = seek_window(rows, size=INBOX_PAGE_SIZE, backwards=backwards, came_from=cursor,
                                     position=lambda a: (a.created_at, a.pk))
    return InboxPage(rows, newer, older, votes=requested_votes([a.pk for a in rows if a.approvals_required > 1]))


def requested_votes(approval_ids: Sequence[int]) -> dict[int, int]:
    """How many distinct reviewers voted for each approval's requested action (one statement; none for none)."""
    if not approval_ids:
        return {}
    return dict(ApprovalVote.objects.filter(approval_id__in=approval_ids, fingerprint=F("approval__action_fingerprint"))
                .values("approval_id").annotate(n=Count("user", distinct=True)).values_list("approval_id", "n"))


@dataclass(frozen=True)
class QuorumState:
    """What an approval page says of its policy: who may decide, how many approvals it needs and has."""

    required: int
    policy: str  # "wire_money policy v2", or "" without a policy
    eligible: tuple[str, ...]  # the groups whose members may decide (empty: any reviewer of the project)
    routed_to: str  # the group it was escalated to, or ""
    requested: tuple[str, ...]  # who approved the requested action so far
    other_actions: tuple[tuple[str, tuple[str, ...]], ...]  # (fingerprint, who) for edited actions
    mine: bool  # the reader approved already

    @property
    def text(self) -> str:
        return f"{len(self.requested)} of {self.required} approvals"


def approval_quorum(approval: ApprovalRequest, user: Any) -> QuorumState | None:
    """The page's account of the approval's policy and votes (None: no policy, one reviewer decides)."""
    policy = approval.policy if approval.policy_id is not None else None
    if policy is None:
        return None
    by_action: dict[str, list[str]] = {}
    voted = False
    for fingerprint, name, user_id in (approval.votes.order_by("created_at", "id")
                                       .values_list("fingerprint", "user__username", "user_id")):
        by_action.setdefault(fingerprint, []).append(name)
        voted = voted or user_id == user.pk
    return QuorumState(
        required=approval.approvals_required, policy=str(policy),
        eligible=tuple(policy.eligible_groups.values_list("name", flat=True)),
        routed_to=approval.routed_group.name if approval.routed_group_id and approval.routed_group else "",
        requested=tuple(by_action.pop(approval.action_fingerprint, [])),
        other_actions=tuple((fp, tuple(names)) for fp, names in by_action.items()), mine=voted)


def inbox_agents(*, project_ids: Sequence[int]) -> list[str]:
    return list(
        Run.objects.for_projects(project_ids).filter(approvals__status=ApprovalStatus.PENDING).exclude(active_agent="")
        .values_list("active_agent", flat=True).distinct().order_by("active_agent")[:200]
    )


def session_recent_items(session_id: int, limit: int = APPROVAL_PAGE_ITEMS) -> list[SessionItem]:
    # Trimming refuses to remove these while an approval of the session is pending (sessions_app.trimming).
    items = list(SessionItem.objects.filter(session_id=session_id).order_by("-seq")[:limit])
    items.reverse()
    return items


def resume_trace(approval: ApprovalRequest, limit: int = 200) -> list[RunEvent]:
    """The run's events from this approval's decision on: the resume, step by step."""
    if approval.status == ApprovalStatus.PENDING:
        return []
    decision = (
        RunEvent.objects.filter(run_id=approval.run_id, kind=f"approval.{approval.status}", data__approval=approval.pk)
        .values_list("seq", flat=True)
        .first()
    )
    events = RunEvent.objects.filter(run_id=approval.run_id)
    if decision is not None:
        events = events.filter(seq__gte=decision)
    elif approval.decided_at is not None:
        events = events.filter(created_at__gte=approval.decided_at)
    return list(events.order_by("seq")[:limit])


def run_approvals(run: Run, limit: int = 200) -> list[ApprovalRequest]:
    return list(ApprovalRequest.objects.filter(run=run).select_related("decided_by").order_by("-created_at")[:limit])


RECENT_DECISIONS_DAYS = 7


def recently_decided(*, project_ids: Sequence[int], now: dt.datetime) -> QuerySet[ApprovalRequest]:
    """Approvals decided in the last RECENT_DECISIONS_DAYS days, newest first, with who decided and what changed:
    the console's "recently decided" list. The window keeps the read to a range of the (project, decided_at) index
    (approval_decided_recently) and a sort of one week's decisions, however long the history."""
    since = now - dt.timedelta(days=RECENT_DECISIONS_DAYS)
    return (ApprovalRequest.objects.for_projects(project_ids).filter(decided_at__gte=since)
            .exclude(status=ApprovalStatus.PENDING)
            .select_related("project", "run", "decided_by").order_by("-decided_at", "-id"))

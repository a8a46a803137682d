"""Reads of standing approvals (issue 33), scoped to the caller's projects like every read."""

from collections.abc import Sequence

from django.db.models import F, Q, QuerySet
from django.utils import timezone

from runs_app.models import StandingApproval


def standing_approval_list(*, project_ids: Sequence[int], live: bool | None = None,
                           tool: str = "") -> QuerySet[StandingApproval]:
    """The projects' rules, newest first. `live`: only those that could approve now (True), only those that no
    longer can: revoked, out of time or out of uses (False)."""
    rules = (StandingApproval.objects.for_projects(project_ids)
             .select_related("project", "created_by", "revoked_by", "session", "run").order_by("-created_at", "-id"))
    if tool:
        rules = rules.filter(tool=tool)
    standing = Q(revoked_at__isnull=True, expires_at__gt=timezone.now(), uses__lt=F("max_uses"))
    if live is True:
        rules = rules.filter(standing)
    elif live is False:
        rules = rules.exclude(standing)
    return rules


def standing_approval_get(*, project_ids: Sequence[int], rule_id: int) -> StandingApproval | None:
    return standing_approval_list(project_ids=project_ids).filter(pk=rule_id).first()

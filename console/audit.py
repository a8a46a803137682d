"""The audit log page's reads: its filters, its pages of entries (by seeking), each entry's link to its
target, and each project's last chain verification (harness.audit.audit_chain_check keeps it)."""

import datetime as dt
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import django_filters
from django.db.models import Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.urls import reverse

from harness.models import AuditChainHead, AuditEntry, AuditVerification, Project
from runs_app.selectors.paging import MAX_SEEK_BRANCHES, parse_seek_cursor, seek_window

AUDIT_PAGE_SIZE = 50

# The console page of each kind of target an entry names (its `target_type`, the model's name in lower case).
TARGET_PAGES = {
    "run": "runs:run_inspector",
    "approvalrequest": "runs:approval_detail",
    "externaleffect": "runs:effect_detail",
    "checkpoint": "runs:checkpoint_detail",
    "handoff": "runs:handoff_detail",
    "task": "runs:task_detail",
    "session": "sessions:session_timeline",
    "memoryrecord": "memory:record_detail",
}


class AuditLogFilter(django_filters.FilterSet):
    """The log's filters, each a query parameter. `project` is not here: the view narrows the projects it
    seeks over. `action` ending in a dot is a family (`memory.` is every memory change)."""

    actor = django_filters.CharFilter(max_length=200)
    action = django_filters.CharFilter(max_length=64, method="filter_action")
    target_type = django_filters.CharFilter(max_length=64)
    target_id = django_filters.CharFilter(max_length=64)
    created = django_filters.IsoDateTimeFromToRangeFilter(field_name="created_at")
    q = django_filters.CharFilter(max_length=200, method="filter_text")

    class Meta:
        model = AuditEntry
        fields: list[str] = []

    def filter_action(self, queryset: QuerySet[AuditEntry], name: str, value: str) -> QuerySet[AuditEntry]:
        return queryset.filter(action__startswith=value) if value.endswith(".") else queryset.filter(action=value)

    def filter_text(self, queryset: QuerySet[AuditEntry], name: str, value: str) -> QuerySet[AuditEntry]:
        # No index serves this: it reads the project's entries, newest first, until a page has matched.
        return queryset.annotate(data_text=Cast("data", TextField())).filter(
            Q(actor__icontains=value) | Q(action__icontains=value) | Q(target_id__icontains=value)
            | Q(data_text__icontains=value))


AuditRefine = Callable[[QuerySet[AuditEntry]], QuerySet[AuditEntry]]


@dataclass(frozen=True)
class AuditPage:
    """A window of the log, newest first, with the cursors of its neighbours (None: nothing there)."""

    object_list: list[AuditEntry]
    older: str | None
    newer: str | None


def _seek(qs: QuerySet[AuditEntry], cursor: tuple[dt.datetime, int] | None, older: bool) -> QuerySet[AuditEntry]:
    if cursor is not None:
        at, pk = cursor
        # (created_at, id) past the cursor; the bare created_at bound is what the index range starts from.
        qs = (qs.filter(created_at__lte=at).filter(Q(created_at__lt=at) | Q(id__lt=pk)) if older
              else qs.filter(created_at__gte=at).filter(Q(created_at__gt=at) | Q(id__gt=pk)))
    return qs.order_by(*(("-created_at", "-id") if older else ("created_at", "id")))


def audit_page(*, project_ids: Sequence[int], refine: AuditRefine, after: str | None = None,
               before: str | None = None) -> AuditPage:
    """One window of AUDIT_PAGE_SIZE entries, newest first, by seeking: a page costs the same at a
    million entries as at a thousand.

    1. `after` walks on to older entries, `before` back to newer ones (the same seek the other way
       round, its rows reversed afterwards).
    2. Per project, seek the (project, -created_at, -id) index from the cursor for one row more than a
       window (`project_id IN (...)` cannot be read from it in order: PostgreSQL would sort them all);
       merge the branches in one UNION statement, then fetch the window's entries with their project.
    3. The window and its neighbours' cursors: runs_app.selectors.paging.seek_window.
    """
    newer = before is not None and after is None
    cursor = parse_seek_cursor(before if newer else after)
    limit = AUDIT_PAGE_SIZE + 1
    scoped = AuditEntry.objects.filter(project_id__in=project_ids)
    if not project_ids or len(project_ids) > MAX_SEEK_BRANCHES:
        rows = list(_seek(refine(scoped), cursor, not newer).select_related("project")[:limit])
    else:
        branches = [_seek(refine(AuditEntry.objects.filter(project_id=p)), cursor, not newer)
                    .values_list("id", "created_at")[:limit] for p in project_ids]
        order = ("created_at", "id") if newer else ("-created_at", "-id")
        picked = list(branches[0].union(*branches[1:], all=True).order_by(*order)[:limit]
                      if len(branches) > 1 else branches[0])
        found = scoped.select_related("project").in_bulk([pk for pk, _ in picked])
        rows = [found[pk] for pk, _ in picked if pk in found]
    rows, older, newer_cursor = seek_window(rows, size=AUDIT_PAGE_SIZE, backwards=newer, came_from=cursor,
                                            position=lambda e: (e.created_at, e.pk))
    return AuditPage(rows, older, newer_cursor)


@dataclass(frozen=True)
class ShownEntry:
    entry: AuditEntry
    target_url: str | None  # the target's console page, where it has one
    data_json: str  # the entry's data as indented JSON text (the template escapes it)


def shown_entries(entries: Sequence[AuditEntry]) -> list[ShownEntry]:
    return [ShownEntry(e, target_url(e.target_type, e.target_id),
                       json.dumps(e.data, indent=2, sort_keys=True, ensure_ascii=False, default=str))
            for e in entries]


def target_url(target_type: str, target_id: str) -> str | None:
    page = TARGET_PAGES.get(target_type)
    if page is None or not target_id.isdigit() or len(target_id) > 18:
        return None
    return reverse(page, args=[int(target_id)])


@dataclass(frozen=True)
class ChainState:
    """A project's chain as its last check left it (`verification` None: never checked)."""

    project: Project
    head_seq: int
    verification: AuditVerification | None

    @property
    def unchecked(self) -> int:
        """Entries written since the last check (the head's seq when it was never checked)."""
        checked = self.verification.head_seq if self.verification else 0
        return max(self.head_seq - checked, 0)


def chain_states(projects: Sequence[Project]) -> list[ChainState]:
    """Each project's last verification and its head now: two statements, however long the chains."""
    ids = [p.pk for p in projects]
    heads = dict(AuditChainHead.objects.filter(project_id__in=ids).values_list("project_id", "seq"))
    checks = AuditVerification.objects.in_bulk(ids)
    return [ChainState(p, heads.get(p.pk, 0), checks.get(p.pk)) for p in projects]

"""Read queries for the console's memory pages, across the projects the viewer may see.

Single-project reads (a record's chain, the held queue's order) reuse memory_app.selectors once the
record's project is known to be visible.
"""

from collections.abc import Sequence

from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone

from memory_app.models import MemoryRecord, MemoryStatus
from memory_app.selectors import fresh_q


def held_count(project_ids: Sequence[int]) -> int:
    return MemoryRecord.objects.filter(project_id__in=project_ids, status=MemoryStatus.HELD).count()


def record_list(
    project_ids: Sequence[int],
    *,
    project: str = "",
    scope: str = "",
    status: str = "",
    provenance: str = "",
    freshness: str = "",
    text: str = "",
) -> QuerySet[MemoryRecord]:
    """The curation list, newest first; `freshness` is "fresh" or "stale" (expired or past validity)."""
    qs = MemoryRecord.objects.filter(project_id__in=project_ids)
    if project:
        qs = qs.filter(project__slug=project)
    if scope:
        qs = qs.filter(scope=scope)
    if status:
        qs = qs.filter(status=status)
    if provenance:
        qs = qs.filter(provenance_kind=provenance)
    if freshness == "fresh":
        qs = qs.filter(fresh_q(timezone.now()))
    elif freshness == "stale":
        qs = qs.exclude(fresh_q(timezone.now()))
    if text:
        qs = qs.filter(content__icontains=text)
    return qs.select_related("project", "source_person").order_by("-created_at", "-id")


def held_list(project_ids: Sequence[int]) -> QuerySet[MemoryRecord]:
    return (
        MemoryRecord.objects.filter(project_id__in=project_ids, status=MemoryStatus.HELD)
        .select_related("project", "source_person", "source_run")
        .order_by("created_at", "id")
    )


def record_get(project_ids: Sequence[int], record_id: int) -> MemoryRecord:
    record = (
        MemoryRecord.objects.filter(project_id__in=project_ids, pk=record_id)
        .select_related("project", "source_person", "source_run")
        .first()
    )
    if record is None:
        raise Http404("No such memory record.")
    return record

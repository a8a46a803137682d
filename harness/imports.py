"""Imported rows (issue 34, part 5: run bundles): a session, run or task imported from another instance is
read-only. bundles_app's triggers refuse every write to one with SQLSTATE `HX409`, which every door answers as 409
`imported_read_only` (harness.http.errors.imported_refusal_of); the queries of the periodic passes skip imported rows
with `imported_ids`, so a timer never tries a write the triggers would refuse."""

from typing import Any

from django.db.models import QuerySet

from harness.http.errors import IMPORTED_CODE, IMPORTED_STATE, imported_refusal_of
from harness.models import ImportedRow

__all__ = ["IMPORTED_CODE", "IMPORTED_STATE", "imported_ids", "imported_refusal_of"]


def imported_ids(kind: str) -> "QuerySet[ImportedRow, Any]":
    """The local ids of imported rows of `kind` (a subquery: `.exclude(run_id__in=imported_ids("run"))`)."""
    return ImportedRow.objects.filter(kind=kind).values("local_id")

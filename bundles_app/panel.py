"""The run inspector's `bundle` panel (registered with runs_app.inspector_panels): where an imported run came from
(the "imported from <source> at <time>" mark), or nothing for a local run."""

from dataclasses import dataclass

from bundles_app.models import ImportedBundle
from harness.models import ImportedRow
from runs_app.models import Run


@dataclass(frozen=True)
class BundleMark:
    bundle: ImportedBundle
    source_id: int  # the run's id at the source


def imported_mark(kind: str, local_id: int) -> BundleMark | None:
    row = ImportedRow.objects.filter(kind=kind, local_id=local_id).first()
    if row is None:
        return None
    bundle = ImportedBundle.objects.filter(pk=row.bundle_id).first()
    return BundleMark(bundle, row.source_id) if bundle is not None else None


def bundle_panel(run: Run) -> BundleMark | None:
    return imported_mark(ImportedRow.Kind.RUN, run.pk)

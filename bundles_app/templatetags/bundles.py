"""`{% bundle_box "run" run.pk %}`: on a run's, session's or task's page, the "imported from <source> at <time>"
mark of an imported one, and for an operator the button that exports it as a bundle (runs_app and sessions_app
cannot import bundles_app: their templates load this tag)."""

from typing import Any

from django import template

from bundles_app.models import ImportedBundle
from harness.http.views import project_roles
from harness.models import ImportedRow
from harness.tenancy import Role

register = template.Library()


def imported_bundle(kind: str, local_id: int) -> tuple[ImportedBundle, int] | None:
    """The bundle a session, run or task came in, and its id at the source; None for a local one."""
    row = ImportedRow.objects.filter(kind=kind, local_id=local_id).first()
    if row is None:
        return None
    bundle = ImportedBundle.objects.filter(pk=row.bundle_id).first()
    return (bundle, row.source_id) if bundle is not None else None


@register.inclusion_tag("bundles/_bundle_box.html", takes_context=True)
def bundle_box(context: Any, kind: str, local_id: int, project_id: int) -> dict[str, Any]:
    found = imported_bundle(kind, local_id)
    request = context["request"]
    return {"kind": kind, "local_id": local_id, "bundle": found[0] if found else None,
            "source_id": found[1] if found else None, "csrf_token": context.get("csrf_token"),
            "may_export": project_roles(request, project_id)[Role.OPERATOR]}

"""The append-only audit trail of human decisions and memory changes."""

from typing import Any

from django.db.models import Model

from harness.actors import Actor
from harness.models import AuditEntry, Project


def audit_record(
    *, project: Project | int, actor: Actor, action: str, target: Model, data: dict[str, Any] | None = None
) -> AuditEntry:
    """Write one audit entry inside the caller's transaction (it commits or rolls back with it)."""
    project_id = project if isinstance(project, int) else project.pk
    return AuditEntry.objects.create(
        project_id=project_id,
        actor=actor.label,
        action=action,
        target_type=type(target).__name__.lower(),
        target_id=str(target.pk),
        data=data or {},
    )

"""The inbox's bulk form shows what each checked row would decide: its tool and arguments as JSON text, not only
the fingerprint it is bound to (the page's script shows the checked rows' entries; without it, all are listed)."""

from collections.abc import Iterable
from dataclasses import dataclass

from runs_app.models import ApprovalRequest
from runs_app.presentation.json_text import pretty


@dataclass(frozen=True)
class ArgumentPreview:
    approval_id: int
    tool: str
    arguments_text: str


def bulk_previews(approvals: Iterable[ApprovalRequest]) -> list[ArgumentPreview]:
    return [ArgumentPreview(a.pk, a.tool, pretty(a.arguments)) for a in approvals]

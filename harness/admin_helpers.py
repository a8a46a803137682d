"""Admin building blocks: read-only append-only records, and transitions offered as actions.

The admin never edits a status field: each transition is an action that calls the same service
every other door calls, with the row's version as the expected version.
"""

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from harness.errors import DomainError
from harness.transitions import StateMachine


class AppendOnlyAdmin(admin.ModelAdmin):
    """History that nobody edits or deletes, in the admin or anywhere else."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def transition_actions(machine: StateMachine, move: Callable[[HttpRequest, Any, str], Any]) -> list[Callable]:
    """One admin action per target state; `move(request, obj, to)` calls the service."""
    actions = []
    for target in sorted(machine.sources_of_any()):
        actions.append(_make_action(machine, target, move))
    return actions


def _make_action(machine: StateMachine, target: str, move: Callable) -> Callable:
    def action(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
        moved = 0
        for obj in queryset:
            try:
                move(request, obj, target)
                moved += 1
            except DomainError as exc:
                modeladmin.message_user(request, f"{obj}: {exc.detail}", messages.ERROR)
        if moved:
            modeladmin.message_user(request, f"{moved} moved to {target}.", messages.SUCCESS)

    action.__name__ = f"move_to_{target}"
    action.short_description = f"Move selected to {target}"  # type: ignore[attr-defined]
    return action

"""Admin building blocks: read-only append-only records, and transitions offered as actions.

The admin never edits a status field: each transition is an action that calls the same service
every other door calls, with the row's version as the expected version.
"""

from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar

from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from harness.errors import DomainError
from harness.transitions import StateMachine

_M = TypeVar("_M", bound=Model)

# An admin action as Django calls it: (the model admin, the request, the selected rows). A string: at run
# time ModelAdmin[_M] is ModelAdmin itself (django_stubs_ext), which would leave the alias not generic.
AdminAction: TypeAlias = "Callable[[admin.ModelAdmin[_M], HttpRequest, QuerySet[_M]], None]"


class AppendOnlyAdmin(admin.ModelAdmin[_M]):
    """History that nobody edits or deletes, in the admin or anywhere else."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def transition_actions(machine: StateMachine, move: Callable[[HttpRequest, _M, str], object]
                       ) -> "list[AdminAction[_M]]":
    """One admin action per target state; `move(request, obj, to)` calls the service."""
    actions = []
    for target in sorted(machine.sources_of_any()):
        actions.append(_make_action(machine, target, move))
    return actions


def _make_action(machine: StateMachine, target: str, move: Callable[[HttpRequest, _M, str], object]
                 ) -> "AdminAction[_M]":
    @admin.action(description=f"Move selected to {target}")
    def action(modeladmin: admin.ModelAdmin[_M], request: HttpRequest, queryset: QuerySet[_M]) -> None:
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
    return action

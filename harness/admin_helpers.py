"""Admin building blocks: the console's roles as the admin's permissions, tenant-scoped; read-only append-only
records; and transitions offered as actions.

The admin never edits a status field: each transition is an action that calls the same service
every other door calls, with the row's version as the expected version.
"""

from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import ForeignKey, Model, QuerySet
from django.http import HttpRequest

from harness.http.errors import DomainError
from harness.models import Project
from harness.tenancy import Role, holds_role_everywhere, projects_for_user
from harness.transitions import StateMachine

_M = TypeVar("_M", bound=Model)

# An admin action as Django calls it: (the model admin, the request, the selected rows). A string: at run
# time ModelAdmin[_M] is ModelAdmin itself (django_stubs_ext), which would leave the alias not generic.
AdminAction: TypeAlias = "Callable[[admin.ModelAdmin[_M], HttpRequest, QuerySet[_M]], None]"


def may_enter_admin(user: AbstractBaseUser | AnonymousUser) -> bool:
    """The Django admin is the admin role's (issue 30): a superuser or a console user in the `admin` group, the
    same rule as the console's (harness.tenancy), whether or not Django's is_staff flag is set."""
    return holds_role_everywhere(user, Role.ADMIN)


class HarnessAdminSite(admin.AdminSite):
    """The default admin site (harness.apps.HarnessAdminConfig): entered by the admin role, not by is_staff and
    Django's per-model permissions, which no console role was ever given (so an admin got 403 on every add form)."""

    site_header = "Harness Console admin"

    def has_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and may_enter_admin(request.user)


class _RoleLoginForm(AdminAuthenticationForm):
    def confirm_login_allowed(self, user: AbstractBaseUser) -> None:
        if not (user.is_active and may_enter_admin(user)):
            raise forms.ValidationError(self.error_messages["invalid_login"], code="invalid_login",
                                        params={"username": self.username_field.verbose_name})


HarnessAdminSite.login_form = _RoleLoginForm


class TenantAdmin(admin.ModelAdmin[_M]):
    """A model's admin for the admin role, scoped to the user's projects.

    A superuser sees and edits every project's rows (Django's own rules). A console user with the admin role
    may view, add, change and delete (where the model's admin allows it at all: an override returning False
    still wins) the rows of the projects they are a member of, and nothing else: the list, the change page and
    every action start from `get_queryset`, and a form's project (or a project-scoped row it points at) can only
    be one of theirs. `tenant_field` is the lookup to the row's project ("pk" for Project itself); None makes
    the model a superuser's only (it belongs to no project). Reviewers, operators and outsiders never enter the
    admin (HarnessAdminSite).
    """

    tenant_field: str | None = "project"

    def _role_admin(self, request: HttpRequest) -> bool:
        return request.user.is_superuser or (self.tenant_field is not None and may_enter_admin(request.user))

    def tenant_projects(self, request: HttpRequest) -> QuerySet[Project]:
        return projects_for_user(request.user)

    def get_queryset(self, request: HttpRequest) -> QuerySet[_M]:
        rows = super().get_queryset(request)
        if request.user.is_superuser:
            return rows
        if self.tenant_field is None or not may_enter_admin(request.user):
            return rows.none()
        return rows.filter(**{f"{self.tenant_field}__in": self.tenant_projects(request)})

    def _in_scope(self, request: HttpRequest, obj: Any) -> bool:
        return obj is None or request.user.is_superuser or self.get_queryset(request).filter(pk=obj.pk).exists()

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._role_admin(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._role_admin(request) and self._in_scope(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._role_admin(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._role_admin(request) and self._in_scope(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._role_admin(request) and self._in_scope(request, obj)

    def get_list_filter(self, request: HttpRequest) -> Any:  # the stubs' private union of filter kinds
        # A filter by project lists only the projects of the rows shown, not every project's name.
        filters = super().get_list_filter(request)
        if request.user.is_superuser:
            return filters
        return [("project", admin.RelatedOnlyFieldListFilter) if f == "project" else f for f in filters]

    def formfield_for_foreignkey(self, db_field: ForeignKey[Any, Any], request: HttpRequest,
                                 **kwargs: Any) -> forms.ModelChoiceField[Any] | None:
        if not request.user.is_superuser:
            related = db_field.related_model
            if related is Project:
                kwargs["queryset"] = self.tenant_projects(request)
            elif isinstance(related, type) and any(f.name == "project" for f in related._meta.fields):
                kwargs["queryset"] = related._default_manager.filter(project__in=self.tenant_projects(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class AppendOnlyAdmin(TenantAdmin[_M]):
    """History that nobody edits or deletes, in the admin or anywhere else."""

    def has_add_permission(self, request: HttpRequest) -> bool:
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

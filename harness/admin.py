from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from harness.actors import Actor
from harness.admin_helpers import AppendOnlyAdmin, TenantAdmin
from harness.http.errors import DomainError
from harness.models import ApiToken, AuditEntry, IdempotentRequest, Membership, Project
from harness.projects import membership_save, project_freeze, project_unfreeze
from harness.tokens import api_tokens_revoke


@admin.register(Project)
class ProjectAdmin(TenantAdmin[Project]):
    """The freeze is set by the actions (harness.projects: an admin, audited), never edited as a field. A project
    admin sees and renames their own projects; making or deleting a project is a superuser's."""

    tenant_field = "pk"

    list_display = ["slug", "name", "created_at", "stale_run_grace_seconds", "frozen_at", "frozen_by", "frozen_reason"]
    search_fields = ["slug", "name"]
    readonly_fields = ["frozen_at", "frozen_by", "frozen_reason"]
    actions = ["freeze", "unfreeze"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj: Project | None = None) -> bool:
        return request.user.is_superuser and super().has_delete_permission(request, obj)

    @admin.action(description="Freeze the selected projects (no agent write, no decision)")
    def freeze(self, request: HttpRequest, queryset: QuerySet[Project]) -> None:
        self._each(request, queryset, lambda p, actor: project_freeze(
            project=p, actor=actor, reason=f"frozen in the admin by {actor.name}"))

    @admin.action(description="Unfreeze the selected projects")
    def unfreeze(self, request: HttpRequest, queryset: QuerySet[Project]) -> None:
        self._each(request, queryset, lambda p, actor: project_unfreeze(project=p, actor=actor,
                                                                        reason="unfrozen in the admin"))

    def _each(self, request: HttpRequest, queryset: QuerySet[Project],
              act: Callable[[Project, Actor], Project]) -> None:
        actor = Actor.of(request.user)
        for project in queryset:
            try:
                act(project, actor)
            except DomainError as exc:
                self.message_user(request, f"{project.slug}: {exc.detail}", messages.ERROR)
            else:
                self.message_user(request, f"{project.slug}: done.", messages.SUCCESS)


class MembershipForm(forms.ModelForm[Membership]):
    roles = forms.MultipleChoiceField(choices=Membership.ProjectRole.choices, required=False,
                                      widget=forms.CheckboxSelectMultiple,
                                      help_text="Roles in this project only; a global group still gives its role "
                                                "in every project the user is a member of.")

    class Meta:
        model = Membership
        fields = ["user", "project", "roles"]


@admin.register(Membership)
class MembershipAdmin(TenantAdmin[Membership]):
    form = MembershipForm
    list_display = ["user", "project", "roles", "created_at"]
    list_filter = ["project"]
    search_fields = ["user__username", "project__slug"]
    autocomplete_fields = ["project"]

    def save_model(self, request: HttpRequest, obj: Membership, form: Any, change: bool) -> None:
        membership_save(membership=obj, actor=Actor.of(request.user))


@admin.register(ApiToken)
class ApiTokenAdmin(TenantAdmin[ApiToken]):
    """Tokens are created and rotated by `manage.py create_agent_token` / `rotate_agent_token` /
    `create_personal_token` and a person's profile page (the secret is shown once, there); here they are revoked.
    A project admin sees their projects' agent tokens and the personal tokens of their projects' members (a leaked
    one can be ended here: a revocation only takes power away)."""

    list_display = ["name", "kind", "role", "project", "user", "prefix", "created_at", "last_used_at", "expires_at",
                    "revoked_at"]
    list_filter = ["kind", "role", "project", "revoked_at"]
    search_fields = ["name", "prefix", "project__slug", "user__username"]
    readonly_fields = ["kind", "name", "role", "project", "user", "prefix", "created_at", "last_used_at", "expires_at",
                       "revoked_at", "agent_identity", "parent", "end_user", "scope_session_id"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet[ApiToken]:
        tokens = admin.ModelAdmin.get_queryset(self, request)
        if request.user.is_superuser:
            return tokens
        if not self._role_admin(request):
            return tokens.none()
        projects = self.tenant_projects(request)
        members = Membership.objects.filter(project__in=projects).values("user_id")
        return tokens.filter(Q(project__in=projects) | Q(kind=ApiToken.Kind.PERSONAL, user_id__in=members))

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        count = api_tokens_revoke(queryset)
        self.message_user(request, f"{count} token(s) revoked.", messages.SUCCESS)


@admin.register(IdempotentRequest)
class IdempotentRequestAdmin(AppendOnlyAdmin[IdempotentRequest]):
    tenant_field = None  # keyed by principal, not by project: a superuser's
    list_display = ["principal", "key", "method", "path", "state", "response_status", "created_at"]
    list_filter = ["state", "method"]
    search_fields = ["principal", "key", "path"]


@admin.register(AuditEntry)
class AuditEntryAdmin(AppendOnlyAdmin[AuditEntry]):
    list_display = ["created_at", "project", "actor", "action", "target_type", "target_id"]
    list_filter = ["project", "action", "target_type"]
    search_fields = ["actor", "action", "target_id"]

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from harness.admin_helpers import AppendOnlyAdmin
from harness.models import ApiToken, AuditEntry, IdempotentRequest, Membership, Project
from harness.tokens import api_tokens_revoke


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin[Project]):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin[Membership]):
    list_display = ["user", "project", "created_at"]
    list_filter = ["project"]
    search_fields = ["user__username", "project__slug"]
    autocomplete_fields = ["project"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin[ApiToken]):
    """Tokens are created and rotated by `manage.py create_agent_token` / `rotate_agent_token` (the secret is shown
    once, on the terminal); here they are revoked."""

    list_display = ["name", "kind", "role", "project", "user", "prefix", "created_at", "last_used_at", "expires_at",
                    "revoked_at"]
    list_filter = ["kind", "role", "project", "revoked_at"]
    search_fields = ["name", "prefix", "project__slug", "user__username"]
    readonly_fields = ["kind", "name", "role", "project", "user", "prefix", "created_at", "last_used_at", "expires_at",
                       "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        count = api_tokens_revoke(queryset)
        self.message_user(request, f"{count} token(s) revoked.", messages.SUCCESS)


@admin.register(IdempotentRequest)
class IdempotentRequestAdmin(AppendOnlyAdmin[IdempotentRequest]):
    list_display = ["principal", "key", "method", "path", "state", "response_status", "created_at"]
    list_filter = ["state", "method"]
    search_fields = ["principal", "key", "path"]


@admin.register(AuditEntry)
class AuditEntryAdmin(AppendOnlyAdmin[AuditEntry]):
    list_display = ["created_at", "project", "actor", "action", "target_type", "target_id"]
    list_filter = ["project", "action", "target_type"]
    search_fields = ["actor", "action", "target_id"]

from django.contrib import admin
from django.http import HttpRequest

from harness.admin_helpers import AppendOnlyAdmin, transition_actions
from sessions_app.models import SESSION_MACHINE, Session, SessionItem
from sessions_app.services import session_transition


def _move(request: HttpRequest, obj: Session, to: str) -> Session:
    return session_transition(project=obj.project, session_id=obj.pk, to=to, expected_version=obj.version)


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin[Session]):
    list_display = ["__str__", "project", "role", "memory_policy", "status", "version", "last_seq", "updated_at"]
    list_filter = ["status", "role", "memory_policy", "project"]
    search_fields = ["ref", "project__slug"]
    readonly_fields = ["status", "version", "last_seq", "created_at", "updated_at"]
    actions = transition_actions(SESSION_MACHINE, _move)

    def get_readonly_fields(self, request: HttpRequest, obj: Session | None = None) -> list[str]:
        # The tenant of an existing session never changes.
        return [*self.readonly_fields, "project"] if obj else list(self.readonly_fields)


@admin.register(SessionItem)
class SessionItemAdmin(AppendOnlyAdmin[SessionItem]):
    list_display = ["session", "seq", "role", "run", "created_at"]
    list_filter = ["role", "session__project"]
    search_fields = ["session__ref"]
    list_select_related = ["session", "run"]

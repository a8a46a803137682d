from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from harness.actors import Actor
from harness.admin_helpers import AppendOnlyAdmin, TenantAdmin, transition_actions
from harness.http.errors import DomainError
from sessions_app import trimming
from sessions_app.forms import CompactForm, TrimForm
from sessions_app.models import SESSION_MACHINE, Session, SessionItem
from sessions_app.services import session_transition


def _move(request: HttpRequest, obj: Session, to: str) -> Session:
    return session_transition(project=obj.project, session_id=obj.pk, to=to, expected_version=obj.version)


@admin.register(Session)
class SessionAdmin(TenantAdmin[Session]):
    list_display = ["__str__", "project", "role", "memory_policy", "status", "version", "last_seq", "updated_at"]
    list_filter = ["status", "role", "memory_policy", "project"]
    search_fields = ["ref", "project__slug"]
    readonly_fields = ["status", "version", "last_seq", "created_at", "updated_at", "history"]
    actions = transition_actions(SESSION_MACHINE, _move)

    @admin.display(description="History")
    def history(self, obj: Session) -> str:
        if obj.pk is None:
            return "—"
        return format_html('<a href="{}">Trim or compact the items…</a>',
                           reverse("admin:sessions_app_session_trim", args=[obj.pk]))

    def get_urls(self) -> list[URLPattern]:
        trim = path("<int:session_id>/trim/", self.admin_site.admin_view(self.trim_view),
                    name="sessions_app_session_trim")
        return [trim, *super().get_urls()]

    def trim_view(self, request: HttpRequest, session_id: int) -> HttpResponse:
        """The admin's door to sessions_app.trimming: the same forms and service as the console's."""
        session = get_object_or_404(Session, pk=session_id)
        if not self.has_change_permission(request, session):
            return HttpResponse(status=403)
        initial = {"expected_last_seq": session.last_seq}
        trim_form, compact_form = TrimForm(initial=initial), CompactForm(initial=initial)
        if request.method == "POST":
            compacting = request.POST.get("operation") == "compact"
            form: TrimForm | CompactForm
            if compacting:
                form = compact_form = CompactForm(request.POST)
            else:
                form = trim_form = TrimForm(request.POST)
            if form.is_valid():
                given, actor = form.cleaned_data, Actor.of(request.user)
                try:
                    if compacting:
                        done = trimming.session_items_compact(
                            project=session.project, session_id=session.pk, actor=actor,
                            first_seq=given["first_seq"], last_seq=given["last_seq"], summary=given["summary"],
                            role=given["role"], expected_last_seq=given["expected_last_seq"])
                    else:
                        done = trimming.session_items_trim(
                            project=session.project, session_id=session.pk, actor=actor,
                            keep_last=given["keep_last"], expected_last_seq=given["expected_last_seq"])
                except DomainError as exc:
                    self.message_user(request, exc.detail, messages.ERROR)
                else:
                    self.message_user(request, f"{done.removed} item(s) removed (sha256 {done.replaced_hash}).",
                                      messages.SUCCESS)
                    return HttpResponseRedirect(reverse("admin:sessions_app_session_change", args=[session.pk]))
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "original": session,
                   "title": f"Trim the history of {session}", "trim_form": trim_form, "compact_form": compact_form}
        return TemplateResponse(request, "admin/sessions_app/session/trim.html", context)

    def get_readonly_fields(self, request: HttpRequest, obj: Session | None = None) -> list[str]:
        # The tenant of an existing session never changes.
        return [*self.readonly_fields, "project"] if obj else list(self.readonly_fields)


@admin.register(SessionItem)
class SessionItemAdmin(AppendOnlyAdmin[SessionItem]):
    tenant_field = "session__project"
    list_display = ["session", "seq", "role", "run", "created_at"]
    list_filter = ["role", "session__project"]
    search_fields = ["session__ref"]
    list_select_related = ["session", "run"]

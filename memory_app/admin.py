"""Memory in the admin: records are read here and moved only by actions that call the services;
write policies are edited here."""

from collections.abc import Callable

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from harness.actors import Actor
from harness.admin_helpers import AppendOnlyAdmin, TenantAdmin
from harness.audit import audit_record
from harness.http.errors import DomainError
from memory_app import services
from memory_app.models import ContextSnapshot, MemoryRecord, MemoryWritePolicy
from memory_app.policy import validate_patterns
from memory_app.selectors import is_fresh


def _each(
    modeladmin: admin.ModelAdmin[MemoryRecord], request: HttpRequest, queryset: QuerySet[MemoryRecord],
    verb: str, apply: Callable[[MemoryRecord, Actor], object],
) -> None:
    actor = Actor.of(request.user)
    done = 0
    for record in queryset.only("id", "project_id", "version"):
        try:
            apply(record, actor)
            done += 1
        except DomainError as exc:
            modeladmin.message_user(request, f"Record {record.pk}: {exc.detail}", messages.ERROR)
    if done:
        modeladmin.message_user(request, f"{done} record(s) {verb}.", messages.SUCCESS)


class MemoryActionForm(ActionForm):
    """The action bar's reason box: the tombstone action passes it on, and the service refuses a blank one."""

    reason = forms.CharField(required=False, max_length=services.REASON_MAX, label="Reason (to delete)")


@admin.register(MemoryRecord)
class MemoryRecordAdmin(TenantAdmin[MemoryRecord]):
    """No field is edited here: a change of content is a supersede, a status change an action."""

    list_display = ["id", "project", "scope", "scope_key", "subject", "short_content", "status", "version", "fresh",
                    "created_at"]
    list_filter = ["status", "scope", "provenance_kind", "project"]
    search_fields = ["subject", "content", "scope_key", "source_note"]
    list_select_related = ["project"]
    actions = ["approve_held", "reject_held", "expire_now", "tombstone", "erase"]
    action_form = MemoryActionForm

    def get_readonly_fields(self, request: HttpRequest, obj: MemoryRecord | None = None) -> list[str]:
        return [f.name for f in MemoryRecord._meta.concrete_fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # writes go through the policy (API, console)

    def has_delete_permission(self, request: HttpRequest, obj: MemoryRecord | None = None) -> bool:
        return False  # deletion keeps a tombstone: the "tombstone" and "erase" actions

    @admin.display(description="content")
    def short_content(self, record: MemoryRecord) -> str:
        return record.content[:80]

    @admin.display(boolean=True)
    def fresh(self, record: MemoryRecord) -> bool:
        return is_fresh(record)

    @admin.action(description="Approve selected held records")
    def approve_held(self, request: HttpRequest, queryset: QuerySet[MemoryRecord]) -> None:
        _each(self, request, queryset, "approved", lambda r, actor: services.memory_review(
            project=r.project_id, actor=actor, record_id=r.pk, approve=True, expected_version=r.version))

    @admin.action(description="Reject selected held records")
    def reject_held(self, request: HttpRequest, queryset: QuerySet[MemoryRecord]) -> None:
        _each(self, request, queryset, "rejected", lambda r, actor: services.memory_review(
            project=r.project_id, actor=actor, record_id=r.pk, approve=False, expected_version=r.version))

    @admin.action(description="Expire selected records now (kept, no longer retrieved)")
    def expire_now(self, request: HttpRequest, queryset: QuerySet[MemoryRecord]) -> None:
        _each(self, request, queryset, "expired", lambda r, actor: services.memory_expire(
            project=r.project_id, actor=actor, record_id=r.pk, expected_version=r.version))

    @admin.action(description="Delete selected records (tombstone)")
    def tombstone(self, request: HttpRequest, queryset: QuerySet[MemoryRecord]) -> None:
        reason = request.POST.get("reason", "")
        _each(self, request, queryset, "deleted", lambda r, actor: services.memory_delete(
            project=r.project_id, actor=actor, record_id=r.pk, expected_version=r.version, reason=reason))

    @admin.action(description="Erase selected records and their earlier versions (content removed everywhere)")
    def erase(self, request: HttpRequest, queryset: QuerySet[MemoryRecord]) -> None:
        _each(self, request, queryset, "erased", lambda r, actor: services.memory_erase(
            project=r.project_id, actor=actor, record_id=r.pk))

    def get_actions(self, request: HttpRequest) -> dict[str, tuple[Callable[..., str], str, str] | None]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


class MemoryWritePolicyForm(forms.ModelForm[MemoryWritePolicy]):
    class Meta:
        model = MemoryWritePolicy
        fields = ["project", "scope", "decision", "max_chars", "provenance_required", "blocked_patterns"]

    def clean_blocked_patterns(self) -> list[str]:
        try:
            return validate_patterns(self.cleaned_data.get("blocked_patterns") or [])
        except DomainError as exc:
            raise forms.ValidationError(exc.detail) from None


@admin.register(MemoryWritePolicy)
class MemoryWritePolicyAdmin(TenantAdmin[MemoryWritePolicy]):
    """One policy per project and scope; with none, writes are accepted up to 4,000 characters
    and need provenance."""

    form = MemoryWritePolicyForm
    list_display = ["project", "scope", "decision", "max_chars", "provenance_required", "updated_at"]
    list_filter = ["decision", "scope", "project"]

    def delete_model(self, request: HttpRequest, obj: MemoryWritePolicy) -> None:
        with transaction.atomic():
            _audit_policy_deleted(request, obj)
            super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[MemoryWritePolicy]) -> None:
        with transaction.atomic():
            for policy in queryset:
                _audit_policy_deleted(request, policy)
            super().delete_queryset(request, queryset)

    def save_model(self, request: HttpRequest, obj: MemoryWritePolicy, form: MemoryWritePolicyForm, change: bool
                   ) -> None:
        super().save_model(request, obj, form, change)
        audit_record(
            project=obj.project_id, actor=Actor.of(request.user), action="memory.policy_saved",
            target=obj, data={"scope": obj.scope, "decision": obj.decision, "max_chars": obj.max_chars,
                              "provenance_required": obj.provenance_required,
                              "blocked_patterns": len(obj.blocked_patterns or [])},
        )


def _audit_policy_deleted(request: HttpRequest, policy: MemoryWritePolicy) -> None:
    # Removing a policy changes what memory is stored from now on (the built-in default applies).
    audit_record(project=policy.project_id, actor=Actor.of(request.user),
                 action="memory.policy_deleted", target=policy,
                 data={"scope": policy.scope, "decision": policy.decision, "max_chars": policy.max_chars})


@admin.register(ContextSnapshot)
class ContextSnapshotAdmin(AppendOnlyAdmin[ContextSnapshot]):
    list_display = ["id", "project", "run", "budget_chars", "used_chars", "created_at"]
    list_filter = ["project"]
    search_fields = ["run__ref", "query"]
    list_select_related = ["project", "run"]

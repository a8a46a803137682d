"""Admin of notify_app: the project's reviewer notifications are set here; webhooks are registered by agents
(API) and only deactivated here (through the service, audited); the delivery log is read-only."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from harness.actors import Actor
from harness.admin_helpers import TenantAdmin, may_enter_admin
from harness.http.errors import ValidationFailed
from notify_app import outbound
from notify_app.models import ProjectNotification, Webhook, WebhookAttempt, WebhookDelivery
from notify_app.services import webhook_deactivate


class ProjectNotificationForm(forms.ModelForm[ProjectNotification]):
    slack_webhook_url = forms.URLField(max_length=500, required=False, assume_scheme="https",
                                       help_text=ProjectNotification._meta.get_field("slack_webhook_url").help_text)

    class Meta:
        model = ProjectNotification
        fields = ["project", "email_reviewers", "slack_webhook_url"]

    def clean_slack_webhook_url(self) -> str:
        """The agents' webhooks' check (notify_app.outbound): no Slack URL that leads to an internal address."""
        url: str = self.cleaned_data["slack_webhook_url"]
        if url:
            try:
                outbound.check_url(url)
            except ValidationFailed as exc:
                raise ValidationError(exc.detail, code=exc.code) from None
        return url


@admin.register(ProjectNotification)
class ProjectNotificationAdmin(TenantAdmin[ProjectNotification]):
    form = ProjectNotificationForm
    list_display = ["project", "email_reviewers", "slack_webhook_url"]


@admin.register(Webhook)
class WebhookAdmin(TenantAdmin[Webhook]):
    list_display = ["__str__", "project", "events", "active", "created_by", "created_at"]
    list_filter = ["active", "project"]
    fields = ("project", "url", "events", "active", "created_by", "created_at")
    readonly_fields = fields
    actions = ["deactivate"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # the secret is handed to the agent that registers it, through the API

    @admin.action(description="Deactivate (no more deliveries)")
    def deactivate(self, request: HttpRequest, queryset: QuerySet[Webhook]) -> None:
        for webhook in queryset.select_related("project"):
            webhook_deactivate(project=webhook.project, webhook_id=webhook.pk, actor=Actor.of(request.user))
        self.message_user(request, "Deactivated.", messages.SUCCESS)


class AttemptInline(admin.TabularInline[WebhookAttempt, WebhookDelivery]):
    model = WebhookAttempt
    fields = ("number", "status_code", "error", "response_excerpt", "duration_ms", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: WebhookDelivery | None = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: WebhookDelivery | None = None) -> bool:
        # Shown with its delivery, which the admin role may see only in its own projects (TenantAdmin).
        return may_enter_admin(request.user)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(TenantAdmin[WebhookDelivery]):
    list_display = ["__str__", "project", "kind", "event", "status", "attempts", "created_at"]
    list_filter = ["status", "kind", "event", "project"]
    inlines = [AttemptInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: WebhookDelivery | None = None) -> bool:
        return False

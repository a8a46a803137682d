from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest
from django.utils.html import format_html_join

from harness.actors import Actor
from harness.admin_helpers import AppendOnlyAdmin, TenantAdmin, transition_actions
from harness.audit import audit_record
from harness.http.errors import DomainError
from runs_app.machines import RUN_MACHINE, TASK_MACHINE
from runs_app.models import (
    ApprovalExpiryDefault,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalStatus,
    Checkpoint,
    CheckpointWrite,
    ExternalEffect,
    Handoff,
    HandoffStatus,
    HumanQuestion,
    NodeExecution,
    RetentionPolicy,
    ReviewerGroup,
    Run,
    RunEvent,
    RunStatus,
    StandingApproval,
    Task,
    ToolSchema,
)
from runs_app.retention import FIELDS, retention_pass, retention_policy_set, retention_report
from runs_app.services import (
    RunAction,
    approval_decide,
    handoff_cancel,
    run_act,
    run_transition,
    task_transition,
    tool_schema_register,
)
from runs_app.services.approval_policies import approval_policy_publish
from runs_app.services.standing_approvals import standing_approval_revoke
from runs_app.tool_schemas import schema_problem

# The admin's moves that are an operator's action on a run (runs_app.services.run_actions): the same service,
# previewed plan and audit as the console's; the reason names the admin, which has no field to type one in.
_RUN_ACTIONS: dict[str, str] = {RunStatus.CANCELLED: RunAction.CANCEL, RunStatus.FAILED: RunAction.FAIL}


def _move_run(request: HttpRequest, obj: Run, to: str) -> Run:
    action: str | None = _RUN_ACTIONS.get(to)
    if obj.status == RunStatus.BLOCKED and to == RunStatus.RUNNING:
        action = RunAction.RETRY
    if action is not None and (action != RunAction.FAIL or obj.status == RunStatus.BLOCKED):
        return run_act(project=obj.project_id, run_id=obj.pk, actor=Actor.of(request.user), action=action,
                       reason=f"admin action by {request.user.get_username()}", expected_version=obj.version)
    # Not as the worker: the admin cannot push a waiting run past its approval either.
    with transaction.atomic():
        run = run_transition(project=obj.project_id, run_id=obj.pk, to=to, expected_version=obj.version,
                             error={"by": f"admin:{request.user.get_username()}"} if to == "failed" else None)
        _audit_move(request, obj, to)
        return run


def _move_task(request: HttpRequest, obj: Task, to: str) -> Task:
    with transaction.atomic():
        task = task_transition(project=obj.project_id, task_id=obj.pk, to=to, expected_version=obj.version)
        _audit_move(request, obj, to)
        return task


def _audit_move(request: HttpRequest, obj: Run | Task, to: str) -> None:
    # A person moving a run or task (deciding a blocked run, say) is a human decision: audited like the others.
    audit_record(project=obj.project_id, actor=Actor.of(request.user),
                 action=f"{type(obj).__name__.lower()}.{to}", target=obj,
                 data={"from": obj.status, "version": obj.version, "door": "admin"})


@admin.register(Task)
class TaskAdmin(TenantAdmin[Task]):
    list_display = ["__str__", "project", "status", "plan_version", "version", "updated_at"]
    list_filter = ["status", "project"]
    search_fields = ["ref", "objective"]
    readonly_fields = ["status", "version", "latest_checkpoint", "created_at", "updated_at"]
    actions = transition_actions(TASK_MACHINE, _move_task)


@admin.register(Run)
class RunAdmin(TenantAdmin[Run]):
    list_display = ["__str__", "project", "session", "task", "status", "version", "lease_owner", "lease_expires_at",
                    "updated_at"]
    list_filter = ["status", "project"]
    search_fields = ["ref", "session__ref", "task__ref", "lease_owner"]
    list_select_related = ["project", "session", "task"]
    readonly_fields = [
        "project", "session", "task", "status", "version", "lease_owner", "lease_expires_at", "last_event_seq",
        "pending_approval", "last_checkpoint", "blocked_step", "error", "bound_result", "metrics", "tokens_used",
        "cost_used", "thread_ttl_days", "created_at", "updated_at",
    ]
    actions = transition_actions(RUN_MACHINE, _move_run)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs are created by agents through the API

    def has_delete_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return False  # a run goes only by retention, with its whole history (the database refuses any other DELETE)


@admin.register(RunEvent)
class RunEventAdmin(AppendOnlyAdmin[RunEvent]):
    tenant_field = "run__project"
    list_display = ["run", "seq", "kind", "created_at"]
    list_filter = ["kind"]
    search_fields = ["run__ref", "kind"]


@admin.register(Checkpoint)
class CheckpointAdmin(AppendOnlyAdmin[Checkpoint]):
    list_display = ["__str__", "project", "run", "task", "parent", "depth", "content_hash", "created_at"]
    list_filter = ["project", "resume_policy"]
    search_fields = ["label", "content_hash", "run__ref", "task__ref"]
    list_select_related = ["project", "run", "task", "parent"]


@admin.register(CheckpointWrite)
class CheckpointWriteAdmin(AppendOnlyAdmin[CheckpointWrite]):
    """A LangGraph thread's pending writes: read-only here; the thread's deletion (audited) removes them."""

    list_display = ["__str__", "project", "run", "ns", "task_id", "idx", "channel", "created_at"]
    list_filter = ["project"]
    search_fields = ["run__ref", "checkpoint_external_id", "task_id", "channel"]
    list_select_related = ["project", "run"]


@admin.register(NodeExecution)
class NodeExecutionAdmin(AppendOnlyAdmin[NodeExecution]):
    tenant_field = "run__project"
    list_display = ["run", "node", "attempt", "status", "started_at", "finished_at"]
    list_filter = ["status"]
    search_fields = ["run__ref", "node"]


@admin.register(ApprovalRequest)
class ApprovalRequestAdmin(TenantAdmin[ApprovalRequest]):
    """Deciding here goes through `approval_decide`: reviewer role, no self-approval, one decision."""

    list_display = ["__str__", "project", "run", "tool", "risk", "executor", "status", "requested_by", "decided_by",
                    "created_at"]
    list_filter = ["status", "risk", "executor", "project"]
    search_fields = ["tool", "idempotency_key", "requested_by", "run__ref"]
    readonly_fields = [f.name for f in ApprovalRequest._meta.fields]
    actions = ["approve"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: ApprovalRequest | None = None) -> bool:
        return False

    @admin.action(description="Approve selected (as requested)")
    def approve(self, request: HttpRequest, queryset: QuerySet[ApprovalRequest]) -> None:
        for approval in queryset.filter(status=ApprovalStatus.PENDING):
            try:
                approval_decide(project=approval.project_id, approval_id=approval.pk, actor=Actor.of(request.user),
                                decision="approve", expected_version=approval.version)
            except DomainError as exc:
                self.message_user(request, f"{approval}: {exc.detail}", messages.ERROR)
            else:
                self.message_user(request, f"{approval}: approved.", messages.SUCCESS)


@admin.register(ExternalEffect)
class ExternalEffectAdmin(TenantAdmin[ExternalEffect]):
    list_display = ["idempotency_key", "project", "run", "tool", "status", "attempts", "receipt", "updated_at"]
    list_filter = ["status", "project"]
    search_fields = ["idempotency_key", "tool", "receipt", "result_hash"]
    readonly_fields = [f.name for f in ExternalEffect._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: ExternalEffect | None = None) -> bool:
        return False


@admin.register(Handoff)
class HandoffAdmin(TenantAdmin[Handoff]):
    """Read-only but for cancelling, which goes through `handoff_cancel` (the origin run is handed back)."""

    list_display = ["__str__", "project", "origin_run", "receiver_session", "receiver_run", "status", "deadline",
                    "receipt", "updated_at"]
    list_filter = ["status", "project"]
    search_fields = ["packet_fingerprint", "result_hash", "receipt", "origin_run__ref", "issued_by"]
    list_select_related = ["project", "origin_run", "receiver_session", "receiver_run"]
    readonly_fields = [f.name for f in Handoff._meta.fields]
    actions = ["cancel"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # issued by agents through the API, with the origin run's move

    def has_delete_permission(self, request: HttpRequest, obj: Handoff | None = None) -> bool:
        return False

    @admin.action(description="Cancel selected (the origin run goes back to running)")
    def cancel(self, request: HttpRequest, queryset: QuerySet[Handoff]) -> None:
        actor = Actor.of(request.user)
        for handoff in queryset.filter(status__in=(HandoffStatus.ISSUED, HandoffStatus.ACCEPTED)):
            try:
                with transaction.atomic():
                    handoff_cancel(project=handoff.project_id, handoff_id=handoff.pk, actor=actor,
                                   reason=f"cancelled in the admin by {request.user.get_username()}",
                                   expected_version=handoff.version)
                    audit_record(project=handoff.project_id, actor=actor, action="handoff.cancelled", target=handoff,
                                 data={"from": handoff.status, "version": handoff.version, "door": "admin"})
            except DomainError as exc:
                self.message_user(request, f"{handoff}: {exc.detail}", messages.ERROR)
            else:
                self.message_user(request, f"{handoff}: cancelled.", messages.SUCCESS)


@admin.register(ApprovalExpiryDefault)
class ApprovalExpiryDefaultAdmin(TenantAdmin[ApprovalExpiryDefault]):
    list_display = ["project", "tool", "risk", "expires_after"]
    list_filter = ["project", "risk"]


class ToolSchemaForm(ModelForm[ToolSchema]):
    class Meta:
        model = ToolSchema
        fields = ["project", "tool", "schema"]

    def clean_schema(self) -> object:
        problem = schema_problem(self.cleaned_data["schema"])
        if problem:
            raise ValidationError(problem)
        return self.cleaned_data["schema"]


@admin.register(ToolSchema)
class ToolSchemaAdmin(TenantAdmin[ToolSchema]):
    """The tool registry: a version is never changed or deleted (approvals name it); adding one goes through
    `tool_schema_register` (the same schema again is the current version, nothing written)."""

    form = ToolSchemaForm
    list_display = ["tool", "version", "project", "registered_by", "created_at"]
    list_filter = ["project"]
    search_fields = ["tool"]
    list_select_related = ["project"]

    def get_readonly_fields(self, request: HttpRequest, obj: ToolSchema | None = None) -> list[str]:
        return ["project", "tool", "version", "schema", "schema_digest", "registered_by", "created_at"] if obj else []

    def has_delete_permission(self, request: HttpRequest, obj: ToolSchema | None = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ToolSchema, form: ModelForm[ToolSchema], change: bool) -> None:
        registered, _ = tool_schema_register(project=obj.project_id, tool=obj.tool, schema=obj.schema,
                                             actor=Actor.of(request.user))
        obj.pk, obj.version = registered.pk, registered.version


@admin.register(ReviewerGroup)
class ReviewerGroupAdmin(TenantAdmin[ReviewerGroup]):
    """The groups policies name (runs_app.policies): membership narrows who of a project's reviewers decides."""

    list_display = ["name", "project", "email_members", "created_at"]
    list_filter = ["project"]
    filter_horizontal = ["members"]


class ApprovalPolicyForm(ModelForm[ApprovalPolicy]):
    class Meta:
        model = ApprovalPolicy
        fields = ["project", "tool", "required_approvals", "eligible_groups", "expires_after", "on_expiry",
                  "escalate_to", "escalation_expires_after", "always_ask", "reject_options"]


@admin.register(ApprovalPolicy)
class ApprovalPolicyAdmin(TenantAdmin[ApprovalPolicy]):
    """Policies are versioned: a version is never changed or deleted (requests name it); adding one publishes the
    tool's next version through `approval_policy_publish`."""

    form = ApprovalPolicyForm
    list_display = ["tool", "version", "project", "required_approvals", "on_expiry", "always_ask", "created_at"]
    list_filter = ["project"]
    search_fields = ["tool"]
    list_select_related = ["project"]

    def get_readonly_fields(self, request: HttpRequest, obj: ApprovalPolicy | None = None) -> list[str]:
        return [*ApprovalPolicyForm.Meta.fields, "version", "created_by", "created_at"] if obj else []

    def has_delete_permission(self, request: HttpRequest, obj: ApprovalPolicy | None = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ApprovalPolicy, form: ModelForm[ApprovalPolicy],
                   change: bool) -> None:
        data = form.cleaned_data
        published = approval_policy_publish(
            project=obj.project_id, tool=obj.tool, actor=Actor.of(request.user),
            required_approvals=obj.required_approvals, eligible_groups=list(data.get("eligible_groups") or []),
            expires_after=obj.expires_after, on_expiry=obj.on_expiry, escalate_to=obj.escalate_to_id,
            escalation_expires_after=obj.escalation_expires_after, always_ask=obj.always_ask,
            reject_options=obj.reject_options)
        obj.pk, obj.version = published.pk, published.version

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """The groups were set by approval_policy_publish with the version."""


@admin.register(HumanQuestion)
class HumanQuestionAdmin(TenantAdmin[HumanQuestion]):
    """Questions to people (runs_app.services.questions): read here; answered on the console's question page or
    through the API, once, never by editing the row."""

    list_display = ["__str__", "project", "run", "asked_by", "status", "answered_by", "created_at"]
    list_filter = ["status", "project"]
    search_fields = ["question", "asked_by", "idempotency_key"]
    list_select_related = ["project", "answered_by"]
    readonly_fields = [f.name for f in HumanQuestion._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: HumanQuestion | None = None) -> bool:
        return False


@admin.register(StandingApproval)
class StandingApprovalAdmin(TenantAdmin[StandingApproval]):
    """Standing approvals (runs_app.services.standing_approvals): written from an approval's page or the API, read
    here, and revoked through `standing_approval_revoke` (audited); never edited or deleted (approvals name them)."""

    list_display = ["__str__", "project", "tool", "agent", "uses", "max_uses", "expires_at", "created_by",
                    "revoked_at"]
    list_filter = ["project", "tool"]
    search_fields = ["tool", "agent"]
    list_select_related = ["project", "created_by"]
    readonly_fields = [f.name for f in StandingApproval._meta.fields]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: StandingApproval | None = None) -> bool:
        return False

    @admin.action(description="Revoke selected")
    def revoke(self, request: HttpRequest, queryset: QuerySet[StandingApproval]) -> None:
        for rule in queryset:
            try:
                standing_approval_revoke(project=rule.project_id, rule_id=rule.pk, actor=Actor.of(request.user))
            except DomainError as exc:
                self.message_user(request, f"{rule}: {exc.detail}", messages.ERROR)
            else:
                self.message_user(request, f"{rule}: revoked.", messages.SUCCESS)


@admin.register(RetentionPolicy)
class RetentionPolicyAdmin(TenantAdmin[RetentionPolicy]):
    """A project's retention policy: saved through the service (audited), with its dry run on the page."""

    list_display = ["project", *FIELDS]
    fields = ["project", *FIELDS, "dry_run"]
    readonly_fields = ["dry_run"]
    actions = ["run_pass"]

    def get_readonly_fields(self, request: HttpRequest, obj: RetentionPolicy | None = None) -> list[str]:
        return ["project", "dry_run"] if obj is not None else ["dry_run"]

    @admin.display(description="Dry run (what a pass would remove now, and what the keep rules keep)")
    def dry_run(self, obj: RetentionPolicy) -> str:
        if obj.pk is None:
            return "-"
        report = retention_report(project=obj.project)
        return format_html_join(
            "", "<div>{}: would remove {}; kept: {}</div>",
            ((kind, part.would_go, ", ".join(f"{rule} {n}" for rule, n in part.kept.items()) or "none")
             for kind, part in report.items()),
        )

    def save_model(
        self, request: HttpRequest, obj: RetentionPolicy, form: ModelForm[RetentionPolicy], change: bool
    ) -> None:
        saved = retention_policy_set(project=obj.project, actor=Actor.of(request.user),
                                     settings={name: getattr(obj, name) for name in FIELDS})
        obj.pk = saved.pk

    @admin.action(description="Run a retention pass now")
    def run_pass(self, request: HttpRequest, queryset: QuerySet[RetentionPolicy]) -> None:
        for policy in queryset.select_related("project"):
            removed = retention_pass(project=policy.project, actor=Actor.of(request.user))
            self.message_user(request, f"{policy.project}: removed {removed}", messages.SUCCESS)

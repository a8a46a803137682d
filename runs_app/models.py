"""Runs and everything a run owns: events, checkpoints, node executions, approvals, effects; tasks.

The states are the TextChoices here; their transition tables and guards are `runs_app.machines`.
Services move rows through them with `harness.transitions.cas_transition` and nothing else writes a status.
"""

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Cast, Upper

from harness.fields import TextJSONField
from harness.models import ApiToken, Project, ProjectScopedQuerySet


class RunStatus(models.TextChoices):
    CREATED = "created"
    RUNNING = "running"
    WAITING_APPROVAL = "waiting_approval"
    WAITING_EXTERNAL = "waiting_external"
    BLOCKED = "blocked"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class TaskStatus(models.TextChoices):
    OPEN = "open"
    ACTIVE = "active"
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"
    ABANDONED = "abandoned"


class ApprovalStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


class ApprovalExecutor(models.TextChoices):
    """Who runs the approved tool: the resume worker (through a tool adapter), or the agent that asked."""

    WORKER = "worker"
    AGENT = "agent"


class ApprovalOutcome(models.TextChoices):
    """What became of an approved action the agent runs itself (executor "agent"), as the agent reported it.

    Not a status of the approval (its decision is final): what the agent did with the decision afterwards, once."""

    UNREPORTED = "", "not reported"
    RAN = "ran"
    NOT_RUN = "not_run", "not run"


class EffectStatus(models.TextChoices):
    INTENDED = "intended"
    DISPATCHED = "dispatched"
    DELIVERED = "delivered"
    CONSUMED = "consumed"
    CONFLICT = "conflict"
    UNKNOWN = "unknown"
    REFUSED = "refused"  # the tool definitely said no (a 4xx): its answer is recorded, nothing follows
    ABANDONED = "abandoned"  # a person gave up an effect whose outcome could not be proven


class FailureCategory(models.TextChoices):
    """Why something failed, so that whoever owns the recovery knows what kind of recovery it needs
    (seed 000, section 10): retry it, fix the input, grant the authority, rethink it, or never repeat it."""

    TRANSIENT = "transient"
    INVALID_INPUT = "invalid_input"
    PERMISSION = "permission"
    SEMANTIC = "semantic"
    IRREVERSIBLE = "irreversible"


class EffectDecision(models.TextChoices):
    """A person's decision on an effect whose outcome is unknown (runs_app.services.effects.effect_resolve)."""

    MARK_DELIVERED = "mark_delivered", "Mark delivered (with the evidence and the result)"
    RETRY = "retry", "Retry under the same idempotency key"
    ABANDON = "abandon", "Abandon the effect"


class Risk(models.TextChoices):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class Task(models.Model):
    """Durable long-task state across runs and days; never rebuilt from a transcript."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="tasks")
    ref = models.CharField(max_length=64, blank=True, default="", help_text="A human reference, e.g. T-7.")
    objective = models.TextField()
    constraints = models.JSONField(default=list, blank=True)
    plan = models.JSONField(default=list, blank=True, help_text="Ordered node names.")
    plan_version = models.PositiveIntegerField(default=1)
    completed_nodes = models.JSONField(default=list, blank=True)
    pending_nodes = models.JSONField(default=list, blank=True)
    artifact_refs = models.JSONField(default=dict, blank=True)
    latest_checkpoint = models.ForeignKey(
        "Checkpoint", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    schema_version = models.PositiveIntegerField(default=1)
    status = models.CharField(max_length=16, choices=TaskStatus.choices, default=TaskStatus.OPEN)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "ref"], condition=~Q(ref=""), name="task_ref_unique"),
            models.CheckConstraint(condition=Q(status__in=TaskStatus.values), name="task_status_valid"),
        ]

    def __str__(self) -> str:
        return self.ref or f"task {self.pk}"


class TaskStateVersion(models.Model):
    """A task's durable state as one save left it: written by a PostgreSQL trigger on every insert of a
    task and every update that changes its state (migration 0013), so whichever door saved it, the
    history has it; a trigger refuses UPDATE. Status moves bump the task's version without a row here."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="+", db_index=False)
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="state_versions", db_index=False)
    version = models.PositiveIntegerField()
    state = models.JSONField(help_text="The task's client-written fields at this version.")
    recorded_at = models.DateTimeField()

    class Meta:
        ordering = ["task", "-id"]
        indexes = [models.Index(fields=["task", "-id"], name="task_state_version_task")]

    def __str__(self) -> str:
        return f"task {self.task_id} v{self.version}"


class Run(models.Model):
    """One invocation inside a session: status, cursor, budget, version and lease."""

    # A write that changes no indexed column can be a HOT update (the new row version on the same
    # page, no index touched); any other touches each of the table's indexes. So no index is kept
    # that another already covers ((project, status, -created_at) leads with the project, (session,
    # created_at) with the session), and none holds `updated_at`, `cursor`, `last_checkpoint`,
    # `last_event_seq` or `metrics`: a checkpoint's pointer update, an event's seq bump and a
    # metrics merge stay HOT. The table keeps 15% of each page free for them (migration 0006).
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="runs", db_index=False)
    session = models.ForeignKey("sessions_app.Session", on_delete=models.PROTECT, related_name="runs",
                                db_index=False)
    task = models.ForeignKey(Task, on_delete=models.PROTECT, null=True, blank=True, related_name="runs")
    ref = models.CharField(max_length=64, blank=True, default="", help_text="A human reference, e.g. R-101.")
    task_mode = models.CharField(max_length=64, blank=True, default="")
    status = models.CharField(max_length=32, choices=RunStatus.choices, default=RunStatus.CREATED)
    active_agent = models.CharField(max_length=120, blank=True, default="")
    current_node = models.CharField(max_length=120, blank=True, default="")
    cursor = models.JSONField(default=dict, blank=True)
    deadline = models.DateTimeField(null=True, blank=True)
    token_budget = models.PositiveBigIntegerField(null=True, blank=True)
    cost_budget = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    tokens_used = models.PositiveBigIntegerField(default=0)
    cost_used = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    pending_approval = models.ForeignKey(
        "ApprovalRequest", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Not indexed (the pointer update stays HOT). Its foreign key is (id, last_checkpoint) -> the checkpoint's
    # (run, id), migration 0022, not Django's (last_checkpoint) -> id: a run's last checkpoint is one of its own,
    # and deleting a checkpoint (retention) checks the runs through their primary key, not a scan of them all.
    last_checkpoint = models.ForeignKey(
        "Checkpoint", on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_index=False,
        db_constraint=False,
    )
    error = models.JSONField(null=True, blank=True, help_text="Why the run failed or is blocked.")
    blocked_step = models.CharField(max_length=64, blank=True, default="")
    failure_category = models.CharField(max_length=16, choices=FailureCategory.choices, blank=True, default="",
                                        db_default="")
    bound_result = models.JSONField(null=True, blank=True, help_text="The approved action's result, for the agent.")
    metrics = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=1)
    lease_owner = models.CharField(max_length=200, blank=True, default="")
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    last_event_seq = models.PositiveBigIntegerField(default=0)
    # A LangGraph thread's own time to live, in days since its last change (runs_app.services.thread_lifecycle):
    # None follows its project's retention policy (`thread_ttl_days`).
    thread_ttl_days = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["project", "status", "-created_at"]),
            models.Index(fields=["status", "lease_expires_at"]),
            models.Index(fields=["session", "created_at"]),
            # The inbox's agent filter lists the agents of runs: only runs that name one are indexed.
            models.Index(fields=["project", "active_agent"], condition=~Q(active_agent=""), name="run_named_agent"),
            # The console's runs list seeks each project's runs newest first (a status filter uses the
            # index above); blocked runs by their step, for its filter and the overview.
            models.Index(fields=["project", "-created_at", "-id"], name="run_project_created"),
            models.Index(fields=["project", "blocked_step"], condition=~Q(blocked_step=""), name="run_blocked_step"),
            # The runs list's text filter (`ref__icontains`, `error__icontains`: UPPER(col::text) LIKE
            # UPPER('%...%')) as trigram lookups: a rare text is found in a million runs by the index,
            # not by reading each (migration 0014). They hold `ref` and `error` only, which change with
            # the run's status (a write that touches indexes anyway): pointer and metrics updates stay HOT.
            GinIndex(OpClass(Upper(Cast("ref", models.TextField())), name="gin_trgm_ops"), name="run_ref_trgm"),
            GinIndex(OpClass(Upper(Cast("error", models.TextField())), name="gin_trgm_ops"), name="run_error_trgm"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["project", "ref"], condition=~Q(ref=""), name="run_ref_unique"),
            models.CheckConstraint(condition=Q(status__in=RunStatus.values), name="run_status_valid"),
            models.CheckConstraint(
                condition=Q(lease_owner="", lease_expires_at__isnull=True)
                | (~Q(lease_owner="") & Q(lease_expires_at__isnull=False)),
                name="run_lease_complete",
            ),
        ]

    def __str__(self) -> str:
        return self.ref or f"run {self.pk}"


class RunEvent(models.Model):
    """Append-only run log; with the Run row (the snapshot) it is the full record of a run."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveBigIntegerField()
    kind = models.CharField(max_length=64)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="run_event_seq_unique")]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.seq} {self.kind}"


class ResumePolicy(models.TextChoices):
    REVALIDATE = "revalidate", "Re-validate, then continue"
    MANUAL = "manual", "A person decides"
    RESTART_NODE = "restart_node", "Restart the current node"


class Checkpoint(models.Model):
    """An immutable, validated resume point. `parent` gives the lineage; forks share a parent."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="checkpoints")
    # (run, -id) and (task, -id) below lead with these: single-column indexes would only slow each write.
    run = models.ForeignKey(Run, on_delete=models.PROTECT, null=True, blank=True, related_name="checkpoints",
                            db_index=False)
    task = models.ForeignKey(Task, on_delete=models.PROTECT, null=True, blank=True, related_name="checkpoints",
                             db_index=False)
    parent = models.ForeignKey("self", on_delete=models.PROTECT, null=True, blank=True, related_name="children")
    label = models.CharField(max_length=120, blank=True, default="")
    # Stored as json, the text as written (harness.fields): read back whole, never searched by content, and the
    # lineage read sends a thousand of them at a time (migration 0024).
    cursor = TextJSONField(default=dict, blank=True)
    state = TextJSONField(default=dict, blank=True)
    artifact_fingerprints = TextJSONField(default=dict, blank=True)
    authority_ref = models.CharField(max_length=200, blank=True, default="")
    pending_gate = TextJSONField(null=True, blank=True)
    approval = models.ForeignKey(
        "ApprovalRequest", on_delete=models.PROTECT, null=True, blank=True, related_name="checkpoints"
    )
    resume_policy = models.CharField(max_length=16, choices=ResumePolicy.choices, default=ResumePolicy.REVALIDATE)
    schema_version = models.PositiveIntegerField(default=1)
    depth = models.PositiveIntegerField(default=0)
    content_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # A LangGraph checkpoint (runs_app.services.threads): its namespace ("" for the root graph), its
    # own id, its parent's id (kept as given, even when that checkpoint is not stored) and its metadata.
    # Empty for the service's own checkpoints. Byte order ("C"): LangGraph's ids sort as strings.
    ns = models.TextField(blank=True, default="", db_default="", db_collation="C")
    external_id = models.TextField(blank=True, default="", db_default="", db_collation="C")
    parent_external_id = models.TextField(blank=True, default="", db_default="", db_collation="C")
    metadata = models.JSONField(default=dict, blank=True, db_default={})

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["task", "-id"]),
        ]
        constraints = [
            # A run's checkpoints, newest first; unique (id is) so that runs' last_checkpoint key can name it.
            models.UniqueConstraint(models.F("run"), models.F("id").desc(), name="checkpoint_run_id_unique"),
            models.CheckConstraint(
                condition=Q(run__isnull=False) | Q(task__isnull=False), name="checkpoint_has_owner"
            ),
            models.CheckConstraint(condition=~Q(parent=models.F("id")), name="checkpoint_not_own_parent"),
            # A thread's checkpoint by (run, ns, id); also its newest first and its list in id order.
            models.UniqueConstraint(fields=["run", "ns", "external_id"], condition=~Q(external_id=""),
                                    name="checkpoint_external_id_unique"),
            models.CheckConstraint(condition=~Q(external_id="") | Q(ns="", parent_external_id=""),
                                   name="checkpoint_external_fields_together"),
        ]

    def __str__(self) -> str:
        return self.label or f"checkpoint {self.pk}"


class CheckpointWrite(models.Model):
    """A LangGraph pending write: what a task wrote to a channel after a thread's checkpoint.

    Keyed by the checkpoint's (run, ns, external id) rather than a foreign key, as LangGraph's own
    savers do: a graph saves a step's writes in the background, and they may arrive before their
    checkpoint. Special channels (errors, interrupts, resumes) have negative `idx` and are replaced
    when written again; other writes are kept as first written.
    """

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="+", db_index=False)
    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="+", db_index=False)
    ns = models.TextField(blank=True, default="", db_collation="C")
    checkpoint_external_id = models.TextField(db_collation="C")
    task_id = models.TextField(db_collation="C")
    task_path = models.TextField(blank=True, default="", db_collation="C")
    idx = models.IntegerField()
    channel = models.TextField()
    value = models.JSONField(null=True, blank=True, help_text="JSON as written, or the serializer's typed bytes.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "ns", "checkpoint_external_id", "task_path", "task_id", "idx"]
        constraints = [
            models.UniqueConstraint(fields=["run", "ns", "checkpoint_external_id", "task_id", "idx"],
                                    name="checkpoint_write_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.checkpoint_external_id} {self.task_id}#{self.idx} {self.channel}"


class NodeExecution(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="node_executions")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, null=True, blank=True, related_name="node_executions")
    node = models.CharField(max_length=120)
    attempt = models.PositiveIntegerField(default=1)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    output = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    failure_category = models.CharField(max_length=16, choices=FailureCategory.choices, blank=True, default="",
                                        db_default="")
    checkpoint = models.ForeignKey(Checkpoint, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "started_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "node", "attempt"], name="node_execution_attempt_unique")
        ]

    def __str__(self) -> str:
        return f"{self.node} attempt {self.attempt} ({self.status})"


class ApprovalExpiryDefault(models.Model):
    """How long an approval request of a project waits when the agent names no deadline: per tool, per risk
    level, or both. The most specific row applies (tool and risk, then tool, then risk); set in the admin."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="approval_expiry_defaults")
    tool = models.CharField(max_length=120, blank=True, default="", help_text="Empty: any tool.")
    risk = models.CharField(max_length=16, choices=Risk.choices, blank=True, default="", help_text="Empty: any risk.")
    expires_after = models.DurationField(help_text="e.g. 4:00:00 for four hours.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "tool", "risk"], name="approval_expiry_default_once")]

    def __str__(self) -> str:
        return f"{self.tool or 'any tool'} / {self.risk or 'any risk'}: {self.expires_after}"


# The kinds of history a project's retention policy prunes, each with the scope its `keep_last` counts in.
RETENTION_KINDS: dict[str, str] = {
    "items": "per session", "events": "per run", "checkpoints": "per run (or task)",
    "effects": "per project", "snapshots": "per run",
    # Last: a run that goes takes its remaining history with it (what the kinds before it left).
    "runs": "per project",
}


class RetentionPolicy(models.Model):
    """How much history a project keeps (issue 20): per kind, rows older than `<kind>_max_age_days` or beyond
    the newest `<kind>_keep_last` of their scope may go. Empty fields keep everything, and a project without a
    policy keeps everything: retention is off unless someone turns it on. What a resume or an audit still
    needs is kept whatever the policy says (runs_app.retention)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="retention_policy")
    items_max_age_days = models.PositiveIntegerField(null=True, blank=True)
    items_keep_last = models.PositiveIntegerField(null=True, blank=True, help_text="Per session.")
    events_max_age_days = models.PositiveIntegerField(null=True, blank=True)
    events_keep_last = models.PositiveIntegerField(null=True, blank=True, help_text="Per run.")
    checkpoints_max_age_days = models.PositiveIntegerField(null=True, blank=True)
    checkpoints_keep_last = models.PositiveIntegerField(null=True, blank=True, help_text="Per run (or task).")
    effects_max_age_days = models.PositiveIntegerField(null=True, blank=True)
    effects_keep_last = models.PositiveIntegerField(null=True, blank=True, help_text="Per project.")
    snapshots_max_age_days = models.PositiveIntegerField(null=True, blank=True)
    snapshots_keep_last = models.PositiveIntegerField(null=True, blank=True, help_text="Per run.")
    # A finished run with its whole history (runs_app migration 0020); its age runs from its last change.
    runs_max_age_days = models.PositiveIntegerField(null=True, blank=True,
                                                    help_text="Finished runs, by the time of their last change.")
    runs_keep_last = models.PositiveIntegerField(null=True, blank=True, help_text="Per project (live runs count too).")
    # LangGraph threads (runs_app.services.thread_lifecycle): a thread unchanged for this many days loses its
    # checkpoints and writes in the pass, unless a keep rule needs its run; a thread's own TTL wins.
    thread_ttl_days = models.PositiveIntegerField(null=True, blank=True,
                                                  help_text="LangGraph threads, days since their last change.")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"retention of project {self.project_id}"


class ToolSchema(models.Model):
    """One version of a tool's declared argument schema (a JSON Schema), per project (issue 32).

    A new schema for the same tool is a new version; old versions stay, so an approval names the one its
    arguments were validated against (ApprovalRequest.tool_schema) and the resume re-validates against that one.
    Written only through runs_app.services.tool_schemas.tool_schema_register."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tool_schemas")
    tool = models.CharField(max_length=120)
    version = models.PositiveIntegerField()
    schema = models.JSONField(help_text="The JSON Schema of the tool's arguments (an object).")
    schema_digest = models.CharField(max_length=64, editable=False)
    registered_by = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["tool", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["project", "tool", "version"], name="tool_schema_version_once"),
            models.CheckConstraint(condition=Q(version__gte=1), name="tool_schema_version_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.tool} v{self.version}"


class ApprovalRequest(models.Model):
    """A pending high-risk action waiting for a human, bound to the action's fingerprint."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="approvals")
    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="approvals")
    tool = models.CharField(max_length=120)
    arguments = models.JSONField(default=dict, blank=True)
    action_fingerprint = models.CharField(max_length=64, editable=False)
    risk = models.CharField(max_length=16, choices=Risk.choices, default=Risk.HIGH)
    idempotency_key = models.CharField(max_length=200)
    reason = models.TextField(blank=True, default="", help_text="Why the agent asks.")
    requested_by = models.CharField(max_length=200)
    requested_by_token = models.ForeignKey(ApiToken, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    status = models.CharField(max_length=16, choices=ApprovalStatus.choices, default=ApprovalStatus.PENDING)
    version = models.PositiveIntegerField(default=1)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True, default="")
    # What the reviewer approved: the requested action, or an edited one with its own fingerprint.
    approved_arguments = models.JSONField(null=True, blank=True)
    approved_fingerprint = models.CharField(max_length=64, blank=True, default="")
    expires_at = models.DateTimeField(null=True, blank=True)
    # The reviewer asked to decide it (any reviewer of the project still may): set by approval_assign.
    assigned_to = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="+")
    # "agent": the resume re-validates and binds the decision to the run, and the agent that asked runs the tool.
    executor = models.CharField(max_length=16, choices=ApprovalExecutor.choices, default=ApprovalExecutor.WORKER)
    # What the reviewer changed, key by key (runs_app.presentation.arguments_diff), written with the decision:
    # the audit entry and the approval.decided webhook carry the same list.
    arguments_changes = models.JSONField(default=list, blank=True)
    # An agent-executed approval's outcome, reported once by the agent (services.approval_report_outcome).
    outcome = models.CharField(max_length=16, choices=ApprovalOutcome.choices, default=ApprovalOutcome.UNREPORTED,
                               blank=True)
    outcome_reason = models.TextField(blank=True, default="")
    outcome_at = models.DateTimeField(null=True, blank=True)
    # The tool's schema version the arguments were validated against when asked (None: the project declared no
    # schema for the tool, and the arguments were not checked); an edit and the resume validate against it too.
    tool_schema = models.ForeignKey(ToolSchema, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    tool_schema_version = models.PositiveIntegerField(null=True, blank=True)
    # The policy version the request is decided under (None: no policy, one reviewer of the project decides),
    # how many distinct reviewers must approve it, and the group it is routed to now (None: any reviewer).
    policy = models.ForeignKey("ApprovalPolicy", on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    policy_version = models.PositiveIntegerField(null=True, blank=True)
    approvals_required = models.PositiveSmallIntegerField(default=1, db_default=1)
    routed_group = models.ForeignKey("ReviewerGroup", on_delete=models.SET_NULL, null=True, blank=True,
                                     related_name="+")
    escalated_at = models.DateTimeField(null=True, blank=True)
    # The standing approval that decided it (None: a person did, or nobody yet).
    standing_approval = models.ForeignKey("StandingApproval", on_delete=models.PROTECT, null=True, blank=True,
                                          related_name="approvals")
    # The policy's reject option the reviewer chose (empty: a plain rejection, or not rejected).
    reject_option = models.CharField(max_length=80, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["project", "status", "-created_at"]),
            # The console's inbox seeks pending approvals by (created_at, id), oldest first.
            models.Index(fields=["project", "created_at", "id"], condition=Q(status="pending"),
                         name="approval_pending_inbox"),
            # An effect's intent and an approval request look up the approvals holding their idempotency key.
            models.Index(fields=["project", "idempotency_key"], name="approval_key_per_project"),
            # The console's "recently decided" list reads a project's last days of decisions, newest first.
            models.Index(fields=["project", "decided_at"], condition=Q(decided_at__isnull=False),
                         name="approval_decided_recently"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=ApprovalStatus.values), name="approval_status_valid"),
            models.CheckConstraint(condition=Q(executor__in=ApprovalExecutor.values), name="approval_executor_valid"),
            # Only an approved action has an outcome: the agent's report when it runs the action itself, or the
            # resume's "not run" when the standing approval behind it no longer stood (runs_app.services.
            # standing_approvals.approval_ask_again).
            models.CheckConstraint(condition=Q(outcome="") | (Q(status="approved") & (
                Q(executor="agent") | Q(standing_approval__isnull=False))), name="approval_outcome_agent_approved"),
            # A decision records who, when and (for approvals) exactly which action.
            models.CheckConstraint(
                condition=Q(status__in=["pending", "expired", "cancelled"])
                | Q(decided_by__isnull=False, decided_at__isnull=False),
                name="approval_decision_recorded",
            ),
            models.CheckConstraint(
                condition=~Q(status="approved") | ~Q(approved_fingerprint=""), name="approval_fingerprint_recorded"
            ),
            models.CheckConstraint(
                condition=~Q(status="rejected") | ~Q(decision_reason=""), name="approval_rejection_reason"
            ),
            # One pending approval per run at a time.
            models.UniqueConstraint(fields=["run"], condition=Q(status="pending"), name="approval_one_pending_per_run"),
        ]

    def __str__(self) -> str:
        return f"{self.tool} for {self.run_id} ({self.status})"


class ExternalEffect(models.Model):
    """An external side effect, identified by its idempotency key (its logical identity)."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="effects")
    run = models.ForeignKey(Run, on_delete=models.PROTECT, null=True, blank=True, related_name="effects")
    approval = models.ForeignKey(
        ApprovalRequest, on_delete=models.PROTECT, null=True, blank=True, related_name="effects"
    )
    idempotency_key = models.CharField(max_length=200)
    tool = models.CharField(max_length=120)
    arguments_digest = models.CharField(max_length=64, blank=True, default="")
    status = models.CharField(max_length=16, choices=EffectStatus.choices, default=EffectStatus.INTENDED)
    version = models.PositiveIntegerField(default=1)
    attempts = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    result_hash = models.CharField(max_length=64, blank=True, default="")
    conflicting_hash = models.CharField(max_length=64, blank=True, default="")
    receipt = models.CharField(max_length=64, blank=True, default="")
    failure_category = models.CharField(max_length=16, choices=FailureCategory.choices, blank=True, default="",
                                        db_default="")
    # A refusal: what the tool answered (HTTP status and body), kept as given.
    answer = models.JSONField(null=True, blank=True)
    # A person's decision on an unknown outcome (who, when, why, the evidence): also in the audit log.
    resolution = models.JSONField(null=True, blank=True)
    # A person allowed one more dispatch of an unknown effect under its key; the dispatch spends it.
    retry_authorized = models.BooleanField(default=False, db_default=False)
    dispatched_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    consumed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "idempotency_key"], name="effect_key_unique_per_project"),
            models.CheckConstraint(condition=Q(status__in=EffectStatus.values), name="effect_status_valid"),
            models.CheckConstraint(condition=~Q(status="refused") | Q(answer__isnull=False),
                                   name="effect_refusal_answer_recorded"),
            models.CheckConstraint(
                condition=~Q(status__in=["delivered", "consumed", "conflict"]) | ~Q(result_hash=""),
                name="effect_result_hash_recorded",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.idempotency_key} ({self.status})"


class HandoffStatus(models.TextChoices):
    ISSUED = "issued"
    ACCEPTED = "accepted"
    RETURNED = "returned"
    CONSUMED = "consumed"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


# A handoff that may still produce a result: its origin run waits on it (one at a time per run).
HANDOFF_OPEN = (HandoffStatus.ISSUED, HandoffStatus.ACCEPTED, HandoffStatus.RETURNED)


class Handoff(models.Model):
    """A bounded, blind job a run hands to another session (seed 002, sections 02 and 11).

    The packet (objective, inputs with their fingerprints, allowed capabilities, output schema, deadline,
    origin run and cursor) is written once, fingerprinted, and never changed: the database refuses an
    UPDATE of it (migration 0010). The receiver sees the packet and nothing else of the origin; its result is
    bound to the packet's fingerprint and consumed once into the origin run by the resume worker.
    """

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="handoffs")
    origin_run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="handoffs")
    receiver_session = models.ForeignKey("sessions_app.Session", on_delete=models.PROTECT, related_name="+")
    # The receiver's own invocation: a run of the receiver session, named when it accepts.
    receiver_run = models.ForeignKey(Run, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    # The receiver's credential (its secret is in the issue's answer only): an agent token of role
    # `handoff_receiver` that reads this handoff, accepts it and returns its result, and nothing else
    # (harness.http.permissions.AgentApiAccess), until the deadline or the handoff's close.
    receiver_token = models.OneToOneField("harness.ApiToken", on_delete=models.SET_NULL, null=True, blank=True,
                                          related_name="handoff", editable=False)
    packet = models.JSONField()
    packet_fingerprint = models.CharField(max_length=64, editable=False)
    deadline = models.DateTimeField()
    status = models.CharField(max_length=16, choices=HandoffStatus.choices, default=HandoffStatus.ISSUED)
    version = models.PositiveIntegerField(default=1)
    issued_by = models.CharField(max_length=200)
    accepted_by = models.CharField(max_length=200, blank=True, default="")
    accepted_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    result_hash = models.CharField(max_length=64, blank=True, default="")
    returned_by = models.CharField(max_length=200, blank=True, default="")
    returned_at = models.DateTimeField(null=True, blank=True)
    receipt = models.CharField(max_length=64, blank=True, default="")
    consumed_at = models.DateTimeField(null=True, blank=True)
    # Whether the receiver's work counts as an independent review, and why (services.handoffs.independence).
    independence = models.JSONField(null=True, blank=True)
    closed_reason = models.TextField(blank=True, default="", help_text="Why it was cancelled or expired.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectScopedQuerySet.as_manager()
    # Set by handoff_issue on the instance it returns, never stored: the receiver token's secret.
    receiver_secret: str = ""

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["project", "status", "-created_at"]),
            models.Index(fields=["receiver_session", "status"]),
            # The recovery pass's two questions: what is past its deadline, what has returned.
            models.Index(fields=["deadline"], condition=Q(status__in=["issued", "accepted"]),
                         name="handoff_open_deadline"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=HandoffStatus.values), name="handoff_status_valid"),
            # A run waits on one handoff at a time: its resume binds exactly that result.
            models.UniqueConstraint(fields=["origin_run"], condition=Q(status__in=["issued", "accepted", "returned"]),
                                    name="handoff_one_open_per_run"),
            models.CheckConstraint(
                condition=~Q(status__in=["returned", "consumed"])
                | (~Q(result_hash="") & Q(receiver_run__isnull=False)),
                name="handoff_result_recorded",
            ),
            models.CheckConstraint(condition=~Q(status="consumed") | ~Q(receipt=""), name="handoff_receipt_recorded"),
        ]

    def __str__(self) -> str:
        return f"handoff {self.pk} of run {self.origin_run_id} ({self.status})"


# --- Approval policies (issue 33): who must approve what, how many, by when; standing approvals; questions. ---


class ReviewerGroup(models.Model):
    """A named set of a project's reviewers that policies route requests to and escalate to (issue 33).

    Membership alone grants nothing: a member decides only while holding the reviewer role in the project
    (harness.tenancy), and a group narrows who of them may decide a request routed to it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="reviewer_groups")
    name = models.CharField(max_length=80)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="reviewer_groups")
    # How the group is told that something waits for it (notify_app): its members' email, and a chat channel's
    # incoming webhook (a Slack-compatible JSON payload with a link back to the console).
    email_members = models.BooleanField(default=True)
    chat_webhook_url = models.URLField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="reviewer_group_name_once")]

    def __str__(self) -> str:
        return self.name


class ExpiryAction(models.TextChoices):
    """What a policy does when a request's time runs out."""

    REJECT = "reject", "reject (the request expires and the run is told)"
    ESCALATE = "escalate", "escalate to another group and notify it"
    WAIT = "wait", "keep waiting"


class ApprovalPolicy(models.Model):
    """One version of the approval policy of a tool (`tool`) or of the project (`tool` empty: the default for
    every tool without its own). A change is a new version; old versions stay, since each approval records the
    version it was decided under (ApprovalRequest.policy). Without any policy a request needs one reviewer of
    the project, as before."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="approval_policies")
    tool = models.CharField(max_length=120, blank=True, default="", help_text="Empty: the project's default.")
    version = models.PositiveIntegerField()
    # Quorum: N distinct eligible reviewers approve the same action (one reject rejects).
    required_approvals = models.PositiveSmallIntegerField(default=1)
    # Who may decide: members of these groups who review in the project (empty: any reviewer of the project).
    # The request is routed to them (their queues, their notices).
    eligible_groups = models.ManyToManyField(ReviewerGroup, blank=True, related_name="+")
    expires_after = models.DurationField(null=True, blank=True, help_text="The default wait, e.g. 4:00:00.")
    on_expiry = models.CharField(max_length=16, choices=ExpiryAction.choices, default=ExpiryAction.REJECT)
    escalate_to = models.ForeignKey(ReviewerGroup, on_delete=models.PROTECT, null=True, blank=True,
                                    related_name="+")
    escalation_expires_after = models.DurationField(null=True, blank=True,
                                                    help_text="How long the escalated request waits.")
    # No standing approval may cover the tool: a person decides every request.
    always_ask = models.BooleanField(default=False)
    # What a reviewer may answer instead of a bare no: [{"name", "reviewer_text", "agent_text"}, ...].
    reject_options = models.JSONField(default=list, blank=True)
    created_by = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["tool", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["project", "tool", "version"], name="approval_policy_version_once"),
            models.CheckConstraint(condition=Q(version__gte=1), name="approval_policy_version_positive"),
            models.CheckConstraint(condition=Q(required_approvals__gte=1), name="approval_policy_quorum_positive"),
            models.CheckConstraint(condition=Q(on_expiry__in=ExpiryAction.values), name="approval_policy_expiry_valid"),
            models.CheckConstraint(condition=~Q(on_expiry="escalate") | Q(escalate_to__isnull=False),
                                   name="approval_policy_escalation_names_group"),
        ]

    def __str__(self) -> str:
        return f"{self.tool or 'project default'} policy v{self.version}"


class ApprovalVote(models.Model):
    """One reviewer's approval of one action (fingerprint) of a request under a quorum policy: the request is
    approved when `approvals_required` distinct eligible reviewers voted for its current action. An edit of the
    arguments is a new action (a new fingerprint): the count restarts. Rejections are not votes: one rejects."""

    approval = models.ForeignKey(ApprovalRequest, on_delete=models.CASCADE, related_name="votes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    fingerprint = models.CharField(max_length=64)
    arguments = models.JSONField(null=True, blank=True, help_text="The action voted for, when edited.")
    reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["approval", "user", "fingerprint"],
                                               name="approval_vote_once_per_action")]

    def __str__(self) -> str:
        return f"vote of {self.user_id} on approval {self.approval_id}"


class StandingApproval(models.Model):
    """A reviewer's time-boxed rule: approve `tool` for an agent / session / run (each optional: the narrower,
    the safer) when the arguments match (`match_arguments`: exact values of these keys; `match_schema`: a JSON
    Schema narrower than the tool's), until `expires_at`, at most `max_uses` times. Never for an "always ask"
    tool. The approval it decides names it; the resume re-checks that it still stands."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="standing_approvals")
    tool = models.CharField(max_length=120)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    agent = models.CharField(max_length=200, blank=True, default="", help_text="Empty: any agent.")
    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, null=True, blank=True,
                                related_name="+")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    match_arguments = models.JSONField(default=dict, blank=True)
    match_schema = models.JSONField(null=True, blank=True)
    expires_at = models.DateTimeField()
    max_uses = models.PositiveIntegerField()
    uses = models.PositiveIntegerField(default=0)
    reason = models.TextField(blank=True, default="")
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "tool"], condition=Q(revoked_at__isnull=True),
                                name="standing_approval_live")]
        constraints = [
            models.CheckConstraint(condition=Q(max_uses__gte=1), name="standing_approval_uses_positive"),
            models.CheckConstraint(condition=Q(uses__lte=F("max_uses")), name="standing_approval_uses_bounded"),
        ]

    def __str__(self) -> str:
        return f"standing approval {self.pk} of {self.tool}"


class QuestionStatus(models.TextChoices):
    PENDING = "pending"
    ANSWERED = "answered"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


class HumanQuestion(models.Model):
    """A question an agent asks a person, beside approvals (issue 33): durable, routed and expiring like an
    approval, answered once (CAS on `version`) with an answer that must match `answer_schema` (a JSON Schema:
    free text, a choice, a small form), the answer bound to the question's fingerprint."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="questions")
    run = models.ForeignKey(Run, on_delete=models.PROTECT, null=True, blank=True, related_name="questions")
    question = models.TextField()
    answer_schema = models.JSONField(default=dict, blank=True)
    context = models.JSONField(default=dict, blank=True)
    fingerprint = models.CharField(max_length=64, editable=False)
    idempotency_key = models.CharField(max_length=200)
    asked_by = models.CharField(max_length=200)
    asked_by_token = models.ForeignKey(ApiToken, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    status = models.CharField(max_length=16, choices=QuestionStatus.choices, default=QuestionStatus.PENDING)
    version = models.PositiveIntegerField(default=1)
    answer = models.JSONField(null=True, blank=True)
    answer_fingerprint = models.CharField(max_length=64, blank=True, default="",
                                          help_text="The question's fingerprint the answer was given to.")
    answered_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
                                    related_name="+")
    answered_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    routed_group = models.ForeignKey(ReviewerGroup, on_delete=models.SET_NULL, null=True, blank=True,
                                     related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "created_at", "id"], condition=Q(status="pending"),
                                name="question_pending_inbox")]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=QuestionStatus.values), name="question_status_valid"),
            models.UniqueConstraint(fields=["project", "idempotency_key"], name="question_key_once"),
            models.CheckConstraint(
                condition=~Q(status="answered")
                | Q(answered_by__isnull=False, answered_at__isnull=False, answer__isnull=False),
                name="question_answer_recorded",
            ),
        ]

    def __str__(self) -> str:
        return f"question {self.pk} ({self.status})"

"""Sessions (resumable execution containers) and their ordered, append-only items."""

from django.db import models
from django.db.models import Q

from harness.fields import TextJSONField
from harness.models import Project, ProjectScopedQuerySet
from harness.transitions import StateMachine


class SessionStatus(models.TextChoices):
    CREATED = "created"
    RUNNING = "running"
    IDLE = "idle"
    AWAITING_USER = "awaiting_user"
    AWAITING_EXTERNAL = "awaiting_external"
    COMPLETED = "completed"
    FAILED = "failed"
    TERMINATED = "terminated"
    STALE = "stale"


S = SessionStatus
# Exactly the seed's lifecycle (seed 002, section 04).
SESSION_MACHINE = StateMachine.declare(
    "session",
    S.CREATED,
    {
        S.CREATED: {S.RUNNING},
        S.RUNNING: {S.IDLE, S.AWAITING_USER, S.AWAITING_EXTERNAL, S.COMPLETED, S.FAILED, S.TERMINATED, S.STALE},
        S.IDLE: {S.RUNNING, S.COMPLETED, S.TERMINATED, S.STALE},
        S.AWAITING_USER: {S.RUNNING, S.FAILED, S.TERMINATED, S.STALE},
        S.AWAITING_EXTERNAL: {S.RUNNING, S.FAILED, S.TERMINATED, S.STALE},
        S.FAILED: {S.RUNNING, S.TERMINATED, S.STALE},
        S.COMPLETED: {S.STALE},
        S.STALE: {S.TERMINATED},
        S.TERMINATED: set(),
    },
)


class SessionRole(models.TextChoices):
    MANAGER = "manager"
    WRITER = "writer"
    SPECIALIST = "specialist"
    SEMANTIC_REVIEWER = "semantic_reviewer"
    HUMAN_REVIEWER = "human_reviewer"
    OTHER = "other"


class MemoryPolicy(models.TextChoices):
    """What the runtime may keep, not what is injected into the next prompt."""

    NONE = "none"
    BOUNDED = "bounded"
    SESSION = "session"
    EXTERNAL = "external"
    CHECKPOINT_ONLY = "checkpoint_only"


class Session(models.Model):
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="sessions")
    ref = models.CharField(max_length=64, blank=True, default="", help_text="A human reference, e.g. S-42.")
    role = models.CharField(max_length=32, choices=SessionRole.choices, default=SessionRole.MANAGER)
    memory_policy = models.CharField(max_length=32, choices=MemoryPolicy.choices, default=MemoryPolicy.BOUNDED)
    # What a projection of this session's context may hold (memory_app.context): its size in characters,
    # and for the `bounded` policy how many of the newest items at most.
    context_budget_chars = models.PositiveIntegerField(default=4000)
    context_items = models.PositiveIntegerField(default=20)
    status = models.CharField(max_length=32, choices=SessionStatus.choices, default=SessionStatus.CREATED)
    version = models.PositiveIntegerField(default=1)
    # The seq of the newest item: bumped and read in the same statement that inserts an item.
    last_seq = models.PositiveBigIntegerField(default=0)
    metadata = models.JSONField(default=dict, blank=True)
    # The end user the session serves (issue 30): set at creation (from a narrowed token, or by an agent token
    # that names it) and never changed. A narrowed token sees only its end user's sessions (sessions_app.selectors).
    end_user = models.CharField(max_length=200, blank=True, default="", editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "status", "-updated_at"]),
                   models.Index(fields=["project", "end_user"], condition=~Q(end_user=""),
                                name="session_end_user")]
        constraints = [
            models.UniqueConstraint(fields=["project", "ref"], condition=~Q(ref=""), name="session_ref_unique"),
            models.CheckConstraint(condition=Q(status__in=SessionStatus.values), name="session_status_valid"),
            models.CheckConstraint(condition=Q(context_budget_chars__gte=1, context_budget_chars__lte=200_000),
                                   name="session_context_budget_range"),
            models.CheckConstraint(condition=Q(context_items__gte=1, context_items__lte=500),
                                   name="session_context_items_range"),
        ]

    def __str__(self) -> str:
        return self.ref or f"session {self.pk}"


class ItemRole(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"
    EVENT = "event"


class SessionItem(models.Model):
    """One conversation item. Append-only: seq is assigned by the server and never reused."""

    # No index of its own: session_item_seq_unique (session, seq) leads with it. The duplicate made one more index
    # to write per append, and the planner preferred its smaller size for a session's range of seqs, walking all
    # of the session's items instead (the retention pass's items, runs_app migration 0035).
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="items", db_index=False)
    seq = models.PositiveBigIntegerField()
    role = models.CharField(max_length=16, choices=ItemRole.choices)
    # Stored as written (json, not jsonb): read back whole far more often than searched (migration 0005).
    content = TextJSONField()
    run = models.ForeignKey("runs_app.Run", on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "seq"]
        # The console's timeline seeks (created_at, id) within a session.
        indexes = [models.Index(fields=["session", "created_at", "id"], name="session_item_timeline")]
        constraints = [models.UniqueConstraint(fields=["session", "seq"], name="session_item_seq_unique")]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq}"

"""Long-term memory: what was chosen to be kept, by whom, from where, for how long, and what replaced it."""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import F, Q

from harness.models import Project, ProjectScopedQuerySet
from harness.transitions import StateMachine


class MemoryScope(models.TextChoices):
    PROJECT = "project"
    USER = "user"
    AGENT = "agent"
    SESSION = "session"


class MemoryStatus(models.TextChoices):
    ACTIVE = "active"
    HELD = "held", "Held for review"
    SUPERSEDED = "superseded"
    DELETED = "deleted"
    REJECTED = "rejected"


M = MemoryStatus
MEMORY_MACHINE = StateMachine.declare(
    "memory",
    M.ACTIVE,
    {
        M.HELD: {M.ACTIVE, M.REJECTED, M.DELETED},
        M.ACTIVE: {M.SUPERSEDED, M.DELETED},
        M.SUPERSEDED: {M.DELETED},
        M.DELETED: set(),
        # A rejected proposal can still be erased (tombstoned and its content wiped).
        M.REJECTED: {M.DELETED},
    },
)


class ProvenanceKind(models.TextChoices):
    OBSERVED = "observed"
    TOLD = "told"
    INFERRED = "inferred"
    EDITED = "edited"


class MemoryRecord(models.Model):
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="memory_records")
    scope = models.CharField(max_length=16, choices=MemoryScope.choices)
    scope_key = models.CharField(
        max_length=200, blank=True, default="", help_text="Names the user, agent or session; empty for project scope."
    )
    subject = models.CharField(max_length=200, blank=True, default="")
    content = models.TextField()
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of the normalised content.")
    provenance_kind = models.CharField(max_length=16, choices=ProvenanceKind.choices)
    source_run = models.ForeignKey("runs_app.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # The item is named by (session, seq), not by a foreign key: trimming a session's history
    # deletes items, and that must never change a memory record (seq is never reused).
    source_session = models.ForeignKey(
        "sessions_app.Session", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    source_item_seq = models.PositiveBigIntegerField(null=True, blank=True)
    source_person = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    source_note = models.CharField(
        max_length=200, blank=True, default="", help_text="Who wrote it: token or agent name."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    last_confirmed_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    # The link lives on the old record and is written in the same conditional UPDATE that moves it
    # active -> superseded, so of two concurrent supersedes exactly one lands. Several records may
    # point at one successor: resolving a conflict supersedes the loser by the record that stays.
    # `record.supersedes` (the reverse side) lists what a record replaced.
    superseded_by = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="supersedes"
    )
    # A LangGraph store item (issue 34: harness_client.langgraph_store): its whole namespace (its first labels are
    # the scope and the scope key, memory_app.store_keys), its key and its value; the content is the value's
    # canonical JSON text (what the policy judges and full-text search reads). Empty for a record written without a
    # key. Of a key's records at most one is active and one held (a put of a new value supersedes the old).
    namespace = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    key = models.CharField(max_length=200, blank=True, default="")
    value = models.JSONField(null=True, blank=True)
    # A store put's TTL: a read that refreshes moves expires_at to now + this.
    ttl_seconds = models.PositiveIntegerField(null=True, blank=True)
    # Where in a LangGraph graph the write was made: thread_id, checkpoint_ns, checkpoint_id, node (the thread's run,
    # when it is one of the project's, is also `source_run`).
    source_graph = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=MemoryStatus.choices, default=MemoryStatus.ACTIVE)
    version = models.PositiveIntegerField(default=1)
    policy_decision = models.CharField(max_length=16, blank=True, default="")
    policy_reason = models.CharField(max_length=300, blank=True, default="")
    deleted_by = models.CharField(max_length=200, blank=True, default="")
    deleted_at = models.DateTimeField(null=True, blank=True)
    erased_at = models.DateTimeField(null=True, blank=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["project", "scope", "scope_key", "status"]),
            models.Index(fields=["project", "subject"]),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=MemoryStatus.values), name="memory_status_valid"),
            models.CheckConstraint(
                condition=Q(scope="project", scope_key="") | (~Q(scope="project") & ~Q(scope_key="")),
                name="memory_scope_key_matches_scope",
            ),
            # Duplicates (same normalised content in the same scope) are merged, also under
            # concurrent writes: the database refuses the second live copy.
            models.UniqueConstraint(
                fields=["project", "scope", "scope_key", "content_hash"],
                condition=Q(status__in=["active", "held"], key=""),
                name="memory_live_content_unique",
            ),
            # A store key names one live value (and at most one more waiting for review), also under concurrent puts.
            models.UniqueConstraint(
                fields=["project", "namespace", "key", "status"],
                condition=Q(status__in=["active", "held"]) & ~Q(key=""),
                name="memory_live_key_unique",
            ),
            models.CheckConstraint(
                condition=Q(key="", namespace=[]) | (~Q(key="") & ~Q(namespace=[])),
                name="memory_key_has_namespace",
            ),
            models.CheckConstraint(
                condition=~Q(status="deleted") | Q(deleted_at__isnull=False), name="memory_tombstone_recorded"
            ),
            models.CheckConstraint(
                condition=Q(source_item_seq__isnull=True) | Q(source_session__isnull=False),
                name="memory_source_item_names_session",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scope}:{self.scope_key} {self.content[:40]}"


class PolicyDecision(models.TextChoices):
    ACCEPT = "accept"
    REJECT = "reject"
    HOLD = "hold", "Hold for review"


class MemoryWritePolicy(models.Model):
    """How writes into one project's scope are judged. With no row, the built-in default applies."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memory_policies")
    scope = models.CharField(max_length=16, choices=MemoryScope.choices)
    decision = models.CharField(max_length=16, choices=PolicyDecision.choices, default=PolicyDecision.ACCEPT)
    max_chars = models.PositiveIntegerField(default=4000)
    provenance_required = models.BooleanField(default=True)
    blocked_patterns = models.JSONField(
        default=list, blank=True, help_text="Regular expressions; matching content is never stored."
    )
    # Whether a token narrowed to one end user (harness.narrowing) may write this scope; only meaningful for the
    # project and agent scopes (memory_app.scoping): by default a narrowed token only reads them.
    end_user_tokens_write = models.BooleanField(
        default=False, help_text="Project and agent scopes: let tokens narrowed to an end user write here too."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "scope"], name="memory_policy_unique")]

    def __str__(self) -> str:
        return f"{self.project} {self.scope}: {self.decision}"


class ContextSnapshot(models.Model):
    """Exactly what was handed to the model for one run: the items and memory it could see."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="context_snapshots")
    run = models.ForeignKey("runs_app.Run", on_delete=models.CASCADE, related_name="context_snapshots")
    item_seqs = models.JSONField(default=list)
    memory_ids = models.JSONField(default=list)
    content = models.JSONField(default=dict, help_text="The rendered snapshot as given to the model.")
    query = models.CharField(max_length=500, blank=True, default="")
    budget_chars = models.PositiveIntegerField()
    used_chars = models.PositiveIntegerField()
    # Why each part went in (memory_app.context): the session's policy and role, every item, memory record,
    # checkpoint and packet with the rule that admitted it, and what the rules or the budget left out.
    manifest = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(used_chars__lte=F("budget_chars")), name="context_within_budget")
        ]

    def __str__(self) -> str:
        return f"context {self.pk} of run {self.run_id}"

"""The shared kernel's records: tenants, who may act in them, API tokens, idempotent replies, audit."""

import hashlib
import secrets
from collections.abc import Iterable
from typing import Self, TypeVar

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now
from django.utils import timezone

_M = TypeVar("_M", bound=models.Model)


class ProjectScopedQuerySet(models.QuerySet[_M]):
    """A tenant's rows. Every door's read starts from `for_projects` with the ids of the projects the
    caller may see (the API's `scope`, the console's `project_ids`), so another project's row is absent."""

    def for_projects(self, project_ids: Iterable[int]) -> Self:
        return self.filter(project_id__in=project_ids)


class Project(models.Model):
    """The tenant and the resource being worked on; every other record hangs off one."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    # A frozen project takes no agent write and no decision, and the resume blocks its runs at `authority_lease`
    # (issue 16, part 5): set and cleared only by harness.projects (an admin, audited), never by a form.
    frozen_at = models.DateTimeField(null=True, blank=True, editable=False)
    frozen_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                  editable=False, related_name="+")
    frozen_reason = models.TextField(blank=True, default="", editable=False)
    # How long a running run may sit past its agent's lease before the recovery pass blocks it
    # (worker.recovery.agent_leases_expired_block, issue 32 part 5); empty: HARNESS_STALE_RUN_GRACE.
    stale_run_grace_seconds = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="Seconds a running run may stay past its expired lease before it is blocked as stale; "
                  "empty: the HARNESS_STALE_RUN_GRACE default.")

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    """Which console users may see a project, and the roles they hold in it (issue 17: a reviewer in one
    project may only read in another). A global group (reviewer, operator) still gives its role in every
    project the user is a member of, and the admin group or a superuser holds every role (harness.tenancy)."""

    class ProjectRole(models.TextChoices):
        REVIEWER = "reviewer", "Reviewer"
        OPERATOR = "operator", "Operator"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    roles = ArrayField(models.CharField(max_length=16, choices=ProjectRole.choices), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "project"], name="membership_unique")]

    def __str__(self) -> str:
        return f"{self.user} in {self.project}"


class ApiToken(models.Model):
    """A bearer token. Agent tokens act inside one project; personal tokens act as a console user.

    Only the SHA-256 of the secret is stored; the secret is shown once, at creation.
    """

    class Kind(models.TextChoices):
        AGENT = "agent", "Agent"
        PERSONAL = "personal", "Personal"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    name = models.CharField(max_length=120)
    role = models.CharField(max_length=32, default="agent")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, null=True, blank=True, related_name="tokens")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="api_tokens"
    )
    prefix = models.CharField(max_length=12, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Past this the token is refused like a revoked one (by the database's clock, in the lookup's statement).
    # A rotation sets it on the old token: both work until then, so an agent can switch without a gap.
    expires_at = models.DateTimeField(null=True, blank=True)
    # The agent identity an agent token's `agent` memory scope is keyed by (memory_app.scoping); blank: its name.
    agent_identity = models.CharField(max_length=200, blank=True, default="")
    # A narrowed token (issue 30, harness.narrowing) is an agent token minted by another (`parent`) for one end
    # user and, optionally, one session: it is refused while its parent is not live (the lookup's statement),
    # cannot mint, and always expires. Its session is named by id, not a foreign key (the kernel does not
    # depend on the apps' tables); the session's own end_user tag is what confines it.
    parent = models.ForeignKey("self", on_delete=models.CASCADE, null=True, blank=True, related_name="narrowed",
                               editable=False)
    end_user = models.CharField(max_length=200, blank=True, default="", editable=False)
    scope_session_id = models.PositiveBigIntegerField(null=True, blank=True, editable=False)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(kind="agent", project__isnull=False, user__isnull=True))
                | (Q(kind="personal", user__isnull=False, project__isnull=True)),
                name="apitoken_kind_owner",
            ),
            # Narrowed: an agent token with a parent, an end user and an expiry; any other token has none of
            # them (and no session).
            models.CheckConstraint(
                condition=(Q(parent__isnull=True, end_user="", scope_session_id__isnull=True))
                | (Q(kind="agent", parent__isnull=False, expires_at__isnull=False) & ~Q(end_user="")),
                name="apitoken_narrowed_shape",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def agent_key(self) -> str:
        """The `agent` memory scope's key this token reads and writes: its agent identity, else its name."""
        return self.agent_identity or self.name

    @property
    def is_narrowed(self) -> bool:
        return self.parent_id is not None

    @staticmethod
    def hash_secret(secret: str) -> str:
        return hashlib.sha256(secret.encode()).hexdigest()

    @staticmethod
    def new_secret() -> str:
        return "hc_" + secrets.token_urlsafe(32)


class IdempotentRequest(models.Model):
    """The first reply to a POST carrying an Idempotency-Key, replayed for retries with the same body."""

    class State(models.TextChoices):
        IN_PROGRESS = "in_progress", "In progress"
        DONE = "done", "Done"

    principal = models.CharField(max_length=80)
    key = models.CharField(max_length=200)
    method = models.CharField(max_length=8)
    path = models.CharField(max_length=500)
    request_hash = models.CharField(max_length=64)
    state = models.CharField(max_length=16, choices=State.choices, default=State.IN_PROGRESS)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["principal", "key"], name="idempotent_request_unique")]

    def __str__(self) -> str:
        return f"{self.principal} {self.method} {self.path} (key {self.key})"


class AuditEntry(models.Model):
    """Append-only record of every human decision and memory change, hash-chained per project.

    A trigger refuses UPDATE and DELETE on this table, and another chains each new entry: it gives the
    entry its project's next `seq`, the previous entry's `hash` as `prev_hash`, and `hash` = SHA-256 of
    `prev_hash` and `mac`, under a lock on the project's AuditChainHead (runs_app migration 0013). `mac` is
    the application's HMAC of the entry's content (harness.audit): SQL can insert a row, but not one whose
    mac verifies, and cannot take one out of the chain unnoticed (`manage.py verify_audit`).
    """

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="audit_entries")
    actor = models.CharField(max_length=200)
    action = models.CharField(max_length=64)
    target_type = models.CharField(max_length=64)
    target_id = models.CharField(max_length=64)
    data = models.JSONField(default=dict, blank=True)
    # Set before the INSERT (not auto_now_add) because the mac covers it.
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    seq = models.PositiveBigIntegerField(null=True, blank=True, editable=False)
    prev_hash = models.CharField(max_length=64, blank=True, default="", editable=False)
    hash = models.CharField(max_length=64, blank=True, default="", editable=False)
    mac = models.CharField(max_length=64, blank=True, default="", editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["target_type", "target_id"]),
            # The console's audit log seeks each project's entries newest first from a cursor.
            models.Index(fields=["project", "-created_at", "-id"], name="audit_entry_project_newest"),
        ]
        constraints = [models.UniqueConstraint(fields=["project", "seq"], name="audit_entry_seq_unique")]

    def __str__(self) -> str:
        return f"{self.actor} {self.action} {self.target_type}:{self.target_id}"


class AuditChainHead(models.Model):
    """The newest entry of a project's audit chain: written only by the chaining trigger (the application's
    runtime role has no privilege on it), read by `verify_audit` to notice entries cut off the end."""

    project = models.OneToOneField(Project, on_delete=models.PROTECT, primary_key=True, related_name="+")
    seq = models.PositiveBigIntegerField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"{self.project_id} #{self.seq} {self.hash[:12]}"


class AuditVerification(models.Model):
    """The last verification of a project's audit chain (harness.audit.audit_chain_check), so a page shows
    it without walking the chain, and the next check walks only the entries written since `verified_seq`.

    Written by the console's "verify now" and by `manage.py verify_audit`, never by the chain's trigger.
    """

    project = models.OneToOneField(Project, on_delete=models.PROTECT, primary_key=True, related_name="+")
    # Entries 1..verified_seq are sound (their macs, their links); verified_hash is that last one's hash.
    verified_seq = models.PositiveBigIntegerField(default=0)
    verified_hash = models.CharField(max_length=64, blank=True, default="")
    head_seq = models.PositiveBigIntegerField(default=0)  # the chain's head when checked
    breaks = models.PositiveIntegerField(default=0)
    # The first break: its seq (none for a break of the chain as a whole), its entry, and why.
    broken_seq = models.PositiveBigIntegerField(null=True, blank=True)
    broken_entry_id = models.BigIntegerField(null=True, blank=True)
    broken_reason = models.TextField(blank=True, default="")
    entries_walked = models.PositiveBigIntegerField(default=0)
    from_start = models.BooleanField(default=True)  # walked from entry 1, not from the last verified entry
    checked_at = models.DateTimeField()  # when the walk began
    checked_by = models.CharField(max_length=200)

    def __str__(self) -> str:
        return f"{self.project_id} verified to #{self.verified_seq}{' BROKEN' if self.breaks else ''}"


class WorkerHeartbeatQuerySet(models.QuerySet["WorkerHeartbeat"]):
    def newest(self) -> "WorkerHeartbeat | None":
        """The most recent beat, with `age_seconds` by the database's clock (a web process's may differ)."""
        age = models.ExpressionWrapper(Now() - models.F("last_seen"), output_field=models.DurationField())
        return self.annotate(age=age).order_by("-last_seen").first()


class WorkerHeartbeat(models.Model):
    """The last beat of each resume worker (by Celery hostname): beat sends `worker.heartbeat` every
    HARNESS_WORKER_HEARTBEAT_SECONDS, so a recent row proves beat, the broker, a worker and the database
    work together. /readyz reads the newest; `queue_lag_seconds` is how long that beat waited in the queue."""

    hostname = models.CharField(max_length=200, unique=True)
    last_seen = models.DateTimeField()
    queue_lag_seconds = models.FloatField(default=0.0)

    objects = WorkerHeartbeatQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.hostname} at {self.last_seen:%Y-%m-%d %H:%M:%S}"

    @property
    def age_seconds(self) -> float:
        age = getattr(self, "age", None)  # annotated by `newest()`
        return age.total_seconds() if age is not None else 0.0


class ImportedRow(models.Model):
    """A session, run or task that came from another instance in a bundle (bundles_app): read-only here.

    The kernel keeps the marker so every app can leave imported rows alone (the recovery pass's timers), and
    triggers refuse every write to them (bundles_app migration 0001, SQLSTATE `HX409`, 409 `imported_read_only`).
    """

    class Kind(models.TextChoices):
        SESSION = "session"
        RUN = "run"
        TASK = "task"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    local_id = models.BigIntegerField()
    source_id = models.BigIntegerField()
    bundle_id = models.BigIntegerField(help_text="The bundles_app.ImportedBundle it came in.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "local_id"], name="imported_row_once")]

    def __str__(self) -> str:
        return f"imported {self.kind} {self.local_id} (was {self.source_id})"

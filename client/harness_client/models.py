"""The API's shapes as frozen dataclasses (answers) and TypedDicts (what a caller hands in).

Every answer class has `from_json`: date-times become aware `datetime`s, decimal strings `Decimal`s,
nested objects their classes. A field the server adds later is kept in `raw` (the whole decoded object),
so an older client still reads it; a field the server drops reads as None.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import types
import typing
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, ClassVar, Generic, Literal, NotRequired, Self, TypedDict, TypeVar

__all__ = [
    "Approval",
    "ApprovalExecutor",
    "ApprovalStatus",
    "BulkResult",
    "Checkpoint",
    "ContextSnapshot",
    "Decision",
    "Effect",
    "EffectDelivery",
    "EffectStatus",
    "Item",
    "ItemPopped",
    "ItemRole",
    "ItemsAppended",
    "ItemsCleared",
    "ItemsLatest",
    "MemoryChain",
    "MemoryConflict",
    "MemoryPolicy",
    "MemoryRecord",
    "MemoryScope",
    "MemoryStatus",
    "MemoryWrite",
    "NarrowedToken",
    "NewItem",
    "Page",
    "Provenance",
    "ProvenanceKind",
    "ResumePolicy",
    "Risk",
    "Run",
    "RunEvent",
    "RunStatus",
    "Session",
    "SessionRole",
    "SessionStatus",
    "Task",
    "TaskStatus",
]

# --- the enumerations (the schema's enums) ---------------------------------------------------------

SessionRole = Literal["manager", "writer", "specialist", "semantic_reviewer", "human_reviewer", "other"]
MemoryPolicy = Literal["none", "bounded", "session", "external", "checkpoint_only"]
SessionStatus = Literal[
    "created", "running", "idle", "awaiting_user", "awaiting_external", "completed", "failed", "terminated", "stale"
]
ItemRole = Literal["user", "assistant", "system", "tool", "event"]
RunStatus = Literal[
    "created", "running", "waiting_approval", "waiting_external", "blocked", "succeeded", "failed", "cancelled"
]
TaskStatus = Literal["open", "active", "waiting", "completed", "failed", "abandoned"]
ApprovalStatus = Literal["pending", "approved", "rejected", "expired", "cancelled"]
ApprovalExecutor = Literal["worker", "agent"]
# What the agent reported of an approved action it runs itself ("" until it reports).
ApprovalOutcome = Literal["", "ran", "not_run"]
# What an approval came to, for the one who asked: approved and ran, approved and not run (with the agent's reason),
# approved and not reported yet by the agent, approved for the resume worker to run, or not approved at all.
ApprovalOutcomeState = Literal["pending", "approved", "approved_waiting_agent", "approved_ran", "approved_not_run",
                               "rejected", "expired", "cancelled"]
Decision = Literal["approve", "reject"]
Risk = Literal["low", "medium", "high", "critical"]
ResumePolicy = Literal["revalidate", "manual", "restart_node"]
EffectStatus = Literal["intended", "dispatched", "delivered", "consumed", "conflict", "unknown", "refused",
                       "abandoned"]
HandoffStatus = Literal["issued", "accepted", "returned", "consumed", "expired", "cancelled"]
MemoryScope = Literal["project", "user", "agent", "session"]
MemoryStatus = Literal["active", "held", "superseded", "deleted", "rejected"]
ProvenanceKind = Literal["observed", "told", "inferred", "edited"]


class NewItem(TypedDict):
    """One session item to append: `{"role": "user", "content": {...}}`, optionally the run it belongs to."""

    role: ItemRole
    content: Any
    run: NotRequired[int | None]


# --- decoding ---------------------------------------------------------------------------------------


def _identity(value: Any) -> Any:
    return value


def _datetime(value: Any) -> Any:
    return dt.datetime.fromisoformat(value) if isinstance(value, str) else value


def _decimal(value: Any) -> Any:
    return Decimal(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else value


def _converter(hint: Any) -> Callable[[Any], Any]:
    """How to decode a JSON value into a field of this type (None passes through every converter)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _converter(inner[0]) if len(inner) == 1 else _identity
    if origin is list:
        (item_hint,) = typing.get_args(hint) or (Any,)
        item = _converter(item_hint)
        if item is _identity:
            return _identity
        return lambda value: [item(v) for v in value] if isinstance(value, list) else value
    if hint is dt.datetime:
        return _datetime
    if hint is Decimal:
        return _decimal
    if isinstance(hint, type) and issubclass(hint, Model):
        return lambda value: hint.from_json(value) if isinstance(value, Mapping) else value
    return _identity


def _nullable(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else convert(value)


_PLANS: dict[type, tuple[tuple[str, Callable[[Any], Any]], ...]] = {}


def _plan(cls: type[Model]) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    """Each field's name and decoder, worked out once per class from its type hints."""
    plan = _PLANS.get(cls)
    if plan is None:
        hints = typing.get_type_hints(cls)
        plan = tuple(
            (field.name, _nullable(_converter(hints[field.name])))
            for field in dataclasses.fields(cls)
            if field.name != "raw"
        )
        _PLANS[cls] = plan
    return plan


@dataclasses.dataclass(frozen=True, kw_only=True)
class Model:
    """Base of the answer classes."""

    raw: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        values = {name: convert(data.get(name)) for name, convert in _plan(cls)}
        return cls(**values, raw=dict(data))


# --- sessions ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Session(Model):
    id: int
    project: str
    ref: str
    role: SessionRole
    memory_policy: MemoryPolicy
    status: SessionStatus
    version: int
    last_seq: int
    metadata: dict[str, Any]
    end_user: str = ""  # the end user it serves (set at creation, never changed); "" for none
    created_at: dt.datetime
    updated_at: dt.datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class NarrowedToken(Model):
    """A token narrowed to one end user (`POST /tokens/narrow/`): `token` is its secret, shown this once."""

    id: int
    token: str = dataclasses.field(repr=False)
    prefix: str
    end_user: str
    session: int | None
    agent: str
    expires_at: dt.datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class Item(Model):
    id: int
    session: int
    seq: int
    role: ItemRole
    content: Any
    run: int | None
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class ItemsAppended(Model):
    items: list[Item]
    last_seq: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class ItemsLatest(Model):
    """The newest items of a session, oldest first, and its `last_seq` (the highest seq ever assigned: removed
    items leave gaps, so it can be above the newest item's seq)."""

    session: int
    last_seq: int
    items: list[Item]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ItemPopped(Model):
    """The item a pop removed (None: the session had none) and the session's `last_seq`, which a pop keeps."""

    item: Item | None
    last_seq: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class ItemsCleared(Model):
    """How many items a clear removed, and the session's `last_seq`, which a clear keeps."""

    removed: int
    last_seq: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class ItemsTrimmed(Model):
    """What a trim or a compaction removed: the seq range, how many, the SHA-256 of what went, the summary item
    that stands in the range's place (compaction only) and the session's `last_seq`, which stays."""

    removed: int
    first_seq: int | None
    last_seq: int | None
    replaced_hash: str
    summary: Item | None
    session_last_seq: int


# --- runs, events, tasks, checkpoints -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Run(Model):
    id: int
    project: str
    session: int
    task: int | None
    ref: str
    task_mode: str
    status: RunStatus
    active_agent: str
    current_node: str
    cursor: dict[str, Any]
    deadline: dt.datetime | None
    token_budget: int | None
    cost_budget: Decimal | None
    tokens_used: int
    cost_used: Decimal
    pending_approval: int | None
    last_checkpoint: int | None
    error: Any
    blocked_step: str
    bound_result: Any
    metrics: dict[str, Any]
    version: int
    lease_owner: str
    lease_expires_at: dt.datetime | None
    last_event_seq: int
    created_at: dt.datetime
    updated_at: dt.datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunEvent(Model):
    id: int
    run: int
    seq: int
    kind: str
    data: Any
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class Task(Model):
    id: int
    project: str
    ref: str
    objective: str
    constraints: list[Any]
    plan: list[str]
    plan_version: int
    completed_nodes: list[Any]
    pending_nodes: list[Any]
    artifact_refs: dict[str, Any]
    pending_approvals: list[dict[str, Any]]  # derived by the server from the task's runs: read-only
    effect_records: list[dict[str, Any]]  # likewise
    latest_checkpoint: int | None
    schema_version: int
    status: TaskStatus
    version: int
    created_at: dt.datetime
    updated_at: dt.datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class Checkpoint(Model):
    id: int
    run: int | None
    task: int | None
    parent: int | None
    depth: int
    label: str
    cursor: dict[str, Any]
    state: dict[str, Any]
    artifact_fingerprints: dict[str, Any]
    authority_ref: str
    pending_gate: Any
    approval: int | None
    resume_policy: ResumePolicy
    schema_version: int
    content_hash: str
    created_at: dt.datetime


# --- approvals and effects ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Approval(Model):
    id: int
    project: str
    run: int
    tool: str
    arguments: Any
    action_fingerprint: str
    risk: Risk
    idempotency_key: str
    reason: str
    requested_by: str
    status: ApprovalStatus
    version: int
    decided_by: str | None
    decided_at: dt.datetime | None
    decision_reason: str
    approved_arguments: Any
    approved_fingerprint: str
    expires_at: dt.datetime | None
    executor: ApprovalExecutor
    # The tool's schema version the arguments were validated against (None: the tool declares no schema).
    tool_schema: int | None = None
    tool_schema_version: int | None = None
    created_at: dt.datetime
    updated_at: dt.datetime
    # What the reviewer changed, key by key: [{"path", "kind": added|removed|changed, "before", "after"}].
    arguments_changes: Any = None
    outcome: ApprovalOutcome = ""
    outcome_reason: str = ""
    outcome_at: dt.datetime | None = None
    # The policy version it is decided under (None: no policy) and the quorum: distinct reviewers' approvals it
    # needs, and those given so far ([{"by", "fingerprint", "at"}]).
    policy_version: int | None = None
    approvals_required: int = 1
    votes: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    # A rejection's reject option (its policy's `name`, "" for a plain rejection) and what the policy tells the
    # agent to do instead: change course rather than only stop.
    reject_option: str = ""
    reject_agent_text: str = ""
    # The standing approval that approved it without asking (None: a person decided, or nobody yet).
    standing_approval: int | None = None

    PENDING: ClassVar[str] = "pending"

    @property
    def outcome_state(self) -> ApprovalOutcomeState:
        """What the approval came to: an approved action the agent runs is `approved_ran` or `approved_not_run`
        only once the agent reported it (`report_approval_outcome`), `approved_waiting_agent` until then."""
        if self.status != "approved":
            return self.status
        if self.executor != "agent":
            return "approved"
        if self.outcome == "ran":
            return "approved_ran"
        if self.outcome == "not_run":
            return "approved_not_run"
        return "approved_waiting_agent"

    @property
    def decided(self) -> bool:
        """No longer pending: approved, rejected, expired or cancelled."""
        return self.status != self.PENDING

    @property
    def approved(self) -> bool:
        return self.status == "approved"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Effect(Model):
    id: int
    run: int | None
    approval: int | None
    idempotency_key: str
    tool: str
    arguments_digest: str
    status: EffectStatus
    version: int
    attempts: int
    result: Any
    result_hash: str
    conflicting_hash: str
    receipt: str
    dispatched_at: dt.datetime | None
    delivered_at: dt.datetime | None
    consumed_at: dt.datetime | None
    created_at: dt.datetime
    updated_at: dt.datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class EffectDelivery(Model):
    outcome: Literal["consumed", "already_consumed"]
    receipt: str
    effect: Effect


# --- handoffs -------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Handoff(Model):
    """A bounded, blind job one run handed to another session: the frozen packet, its fingerprint, and the
    result bound to it (consumed once into the origin run by the resume worker). `receiver_token` is in the
    issue's answer only (None elsewhere): the receiver's credential, which reads this handoff, accepts it and
    returns its result, and nothing else; hand it to the receiving agent."""

    id: int
    project: str
    origin_run: int
    receiver_session: int
    receiver_run: int | None
    packet: dict[str, Any]
    packet_fingerprint: str
    deadline: dt.datetime
    status: HandoffStatus
    version: int
    issued_by: str
    accepted_by: str
    accepted_at: dt.datetime | None
    result: Any
    result_hash: str
    returned_by: str
    returned_at: dt.datetime | None
    receipt: str
    consumed_at: dt.datetime | None
    independence: dict[str, Any] | None
    closed_reason: str
    created_at: dt.datetime
    updated_at: dt.datetime
    receiver_token: str | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fork(Model):
    """A run forked from a checkpoint: the new run, its first checkpoint (whose parent is the source) and the
    state's diff from the source (`{"added", "removed", "changed"}`)."""

    run: Run
    checkpoint: Checkpoint
    diff: dict[str, Any]


# --- retention ------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Retention(Model):
    """A project's retention policy: every `<kind>_max_age_days` / `<kind>_keep_last` (None: no limit) for the
    kinds items, events, checkpoints, effects, snapshots and runs (a finished run goes with its whole history).
    `enabled` False: the project keeps everything."""

    project: str
    enabled: bool
    settings: dict[str, int | None]


@dataclasses.dataclass(frozen=True, kw_only=True)
class RetentionDryRun(Model):
    """What a retention pass would remove now: per kind, `{"would_go": n, "kept": {keep rule: n}}`."""

    project: str
    kinds: dict[str, dict[str, Any]]


# --- webhooks -------------------------------------------------------------------------------------------

WebhookEvent = Literal["approval.requested", "approval.decided", "approval.escalated", "run.status_changed"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Webhook(Model):
    """An agent's outbound webhook. `secret` is in the registration's answer only (None elsewhere): each delivery
    carries `X-Harness-Timestamp` and `X-Harness-Signature: sha256=HMAC-SHA256(secret, "<timestamp>." + body)`."""

    id: int
    project: str
    url: str
    events: list[str]
    active: bool
    created_by: str
    created_at: dt.datetime
    secret: str | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class ToolSchema(Model):
    """One version of a tool's declared argument schema (a JSON Schema) in the token's project."""

    id: int
    project: str
    tool: str
    version: int
    schema: dict[str, Any]
    schema_digest: str
    registered_by: str
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class ApprovalPolicy(Model):
    """One version of a tool's approval policy (`tool` "": the project's default): how many distinct reviewers must
    approve, which reviewer groups decide, the default wait and what happens when it runs out."""

    id: int
    project: str
    tool: str
    version: int
    required_approvals: int
    eligible_groups: list[int]
    expires_after: str | None  # a duration as the API writes it ("04:00:00", "1 02:00:00"), None: no default
    on_expiry: str  # "reject" | "escalate" | "wait"
    escalate_to: int | None
    escalation_expires_after: str | None
    always_ask: bool
    reject_options: list[dict[str, Any]]
    created_by: str
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReviewerGroup(Model):
    """A project's reviewer group: the people a policy routes requests to (membership alone grants no role)."""

    id: int
    project: str
    name: str
    members: list[str]
    email_members: bool
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class StandingApproval(Model):
    """A reviewer's "approve and don't ask again": approves `tool`'s matching requests (for `agent`, `session` or
    `run` when set; `match_arguments` exact values, `match_schema` a JSON Schema) until `expires_at`, at most
    `max_uses` times. The approvals it makes name it (`Approval.standing_approval`)."""

    id: int
    project: str
    tool: str
    created_by: str
    agent: str
    session: int | None
    run: int | None
    match_arguments: dict[str, Any]
    match_schema: dict[str, Any] | None
    expires_at: dt.datetime
    max_uses: int
    uses: int
    reason: str
    revoked_at: dt.datetime | None
    revoked_by: str | None
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class Question(Model):
    """A question an agent asked a person (`ask_question`): its `answer_schema` (free text, a choice, a small form),
    and once a reviewer answered it, the `answer` (bound to the question's `fingerprint`) and who gave it."""

    id: int
    project: str
    run: int | None
    question: str
    answer_schema: dict[str, Any]
    context: dict[str, Any]
    fingerprint: str
    idempotency_key: str
    asked_by: str
    status: str  # "pending" | "answered" | "expired" | "cancelled"
    version: int
    answer: Any
    answer_fingerprint: str
    answered_by: str | None
    answered_at: dt.datetime | None
    expires_at: dt.datetime | None
    routed_group: int | None
    created_at: dt.datetime
    updated_at: dt.datetime

    @property
    def settled(self) -> bool:
        """Answered, expired or cancelled: nothing more will change."""
        return self.status != "pending"


# --- memory ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Provenance(Model):
    kind: ProvenanceKind
    run: int | None
    session: int | None
    item_seq: int | None
    person: str | None
    by: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class MemoryRecord(Model):
    id: int
    scope: MemoryScope
    scope_key: str
    subject: str
    content: str
    status: MemoryStatus
    version: int
    provenance: Provenance
    created_at: dt.datetime
    updated_at: dt.datetime
    valid_until: dt.datetime | None
    last_confirmed_at: dt.datetime | None
    expires_at: dt.datetime | None
    fresh: bool
    superseded_by: int | None
    supersedes: list[int]
    policy_decision: str
    policy_reason: str
    deleted_by: str
    deleted_at: dt.datetime | None
    erased_at: dt.datetime | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class MemoryWrite(Model):
    """The policy's answer to a proposed write: accepted or held (a new record), or merged (an existing one)."""

    outcome: Literal["accepted", "merged", "held"]
    code: str
    reason: str
    record: MemoryRecord | None
    conflicts: list[int]


@dataclasses.dataclass(frozen=True, kw_only=True)
class MemoryChain(Model):
    record: int
    before: list[int]
    after: list[int]
    versions: list[MemoryRecord]


@dataclasses.dataclass(frozen=True, kw_only=True)
class MemoryConflict(Model):
    scope: MemoryScope
    scope_key: str
    subject: str
    records: list[MemoryRecord]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ContextSnapshot(Model):
    id: int
    run: int
    item_seqs: list[int]
    memory_ids: list[int]
    query: str
    budget_chars: int
    used_chars: int
    content: Any
    created_at: dt.datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class BulkResult(Model):
    done: list[int]
    failed: dict[str, str]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ErasureReport(Model):
    """Per store (memory, session_items, context_snapshots, idempotent_replies, approvals, audit_entries, ...):
    {"erased", "kept", "why_kept"}."""

    subject_sha256: str
    dry_run: bool
    stores: dict[str, dict[str, Any]]


T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a cursor-paginated list; `next`/`previous` are the server's links (None at an end)."""

    results: list[T]
    next: str | None
    previous: str | None

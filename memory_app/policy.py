"""The write policy: what a proposed memory write is judged against, and the verdict with its reason.

Pure functions over a policy and a proposal; the service applies the verdict. With no
`MemoryWritePolicy` row for a project and scope, the built-in default applies.
"""

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field

from harness.http.errors import ValidationFailed
from harness.models import Project
from memory_app.models import MemoryWritePolicy, PolicyDecision

DEFAULT_MAX_CHARS = 4000
MAX_PATTERNS = 50
MAX_PATTERN_CHARS = 500


class Outcome:
    """What a write came to; returned to the caller with the reason."""

    ACCEPTED = "accepted"
    MERGED = "merged"
    HELD = "held"
    REJECTED = "rejected"


@dataclass(frozen=True)
class Policy:
    decision: str = PolicyDecision.ACCEPT
    max_chars: int = DEFAULT_MAX_CHARS
    provenance_required: bool = True
    blocked_patterns: tuple[str, ...] = field(default_factory=tuple)
    source: str = "default"


@dataclass(frozen=True)
class Verdict:
    decision: str  # a PolicyDecision value
    reason: str
    code: str


def normalise(content: str) -> str:
    """The form duplicates are compared in: Unicode-normalised, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", content).casefold().split())


def content_hash(content: str) -> str:
    return hashlib.sha256(normalise(content).encode()).hexdigest()


def policy_for(*, project: Project | int, scope: str) -> Policy:
    project_id = project if isinstance(project, int) else project.pk
    row = MemoryWritePolicy.objects.filter(project_id=project_id, scope=scope).first()
    if row is None:
        return Policy()
    return Policy(
        decision=row.decision,
        max_chars=row.max_chars,
        provenance_required=row.provenance_required,
        blocked_patterns=tuple(row.blocked_patterns or ()),
        source=f"policy {row.pk} ({scope})",
    )


def validate_patterns(patterns: object) -> list[str]:
    """Used by the admin form: a policy is saved only with patterns that compile."""
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise ValidationFailed("blocked_patterns is a list of regular expressions.", code="invalid_patterns")
    if len(patterns) > MAX_PATTERNS:
        raise ValidationFailed(f"At most {MAX_PATTERNS} patterns.", code="invalid_patterns")
    for pattern in patterns:
        if len(pattern) > MAX_PATTERN_CHARS:
            raise ValidationFailed(f"A pattern is at most {MAX_PATTERN_CHARS} characters.", code="invalid_patterns")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValidationFailed(
                f"{pattern!r} is not a regular expression: {exc}.", code="invalid_patterns"
            ) from None
    return patterns


# Session memory policies under which the runtime keeps no memory (seed 002, section 03): a write made in such a
# session's context is refused. The roles whose writes a person reviews first: a semantic reviewer's verdicts
# must not become memory another run retrieves unreviewed (it is never handed retrieved memory either).
SESSION_POLICIES_KEEPING_NO_MEMORY = ("none", "checkpoint_only")
SESSION_ROLES_HELD = ("semantic_reviewer",)


def session_verdict(sessions: list[tuple[int, str, str]]) -> Verdict | None:
    """Judge a write by the sessions it is made in the context of ((id, memory_policy, role) of each: the
    source session, the source run's session, a `session` scope's session). None: no session says anything."""
    for session_id, policy, _role in sessions:
        if policy in SESSION_POLICIES_KEEPING_NO_MEMORY:
            return Verdict(PolicyDecision.REJECT, f"Session {session_id}'s memory policy is {policy}: it keeps no "
                           "memory.", "session_keeps_no_memory")
    for session_id, _policy, role in sessions:
        if role in SESSION_ROLES_HELD:
            return Verdict(PolicyDecision.HOLD, f"Held for review: session {session_id}'s role is {role}.",
                           "session_role_held")
    return None


def evaluate(policy: Policy, *, content: str, has_provenance: bool) -> Verdict:
    """Judge one proposal. Size, patterns and provenance come first: they refuse whatever the decision.

    1. Empty or over the size limit: rejected.
    2. Matches a never-stored pattern: rejected (the reason names the pattern's index, not the text).
    3. Provenance required and none given: rejected.
    4. Otherwise the policy's decision: accept, hold for review, or reject.
    """
    if not content.strip():
        return Verdict(PolicyDecision.REJECT, "The content is empty.", "empty")
    if len(content) > policy.max_chars:
        return Verdict(
            PolicyDecision.REJECT, f"The content is {len(content)} characters; the limit is {policy.max_chars}.",
            "too_long",
        )
    for index, pattern in enumerate(policy.blocked_patterns):
        try:
            matched = re.search(pattern, content, flags=re.IGNORECASE) is not None
        except re.error:
            # Fail closed: a broken pattern must not let through what it was meant to stop.
            return Verdict(PolicyDecision.REJECT, f"Never-stored pattern #{index + 1} is invalid.", "bad_pattern")
        if matched:
            return Verdict(PolicyDecision.REJECT, f"Matches never-stored pattern #{index + 1}.", "blocked_pattern")
    if policy.provenance_required and not has_provenance:
        return Verdict(
            PolicyDecision.REJECT, "Provenance is required: name the source run, session item or person.",
            "provenance_required",
        )
    if policy.decision == PolicyDecision.HOLD:
        return Verdict(PolicyDecision.HOLD, f"Held for review by {policy.source}.", "held_for_review")
    if policy.decision == PolicyDecision.REJECT:
        return Verdict(PolicyDecision.REJECT, f"Writes to this scope are refused by {policy.source}.", "scope_refused")
    return Verdict(PolicyDecision.ACCEPT, f"Accepted by {policy.source}.", "accepted")

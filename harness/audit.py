"""The append-only audit trail of human decisions and memory changes, hash-chained per project.

Two protections, each against what the other cannot stop:
- `mac`: the application's HMAC (a key derived from SECRET_KEY) of the entry's content. Anyone who can
  run SQL as the application can INSERT a row, but not one whose mac verifies: a forged decision is
  refused by the resume (worker.steps.approval_preconditions) and reported by `manage.py verify_audit`.
- the chain: a trigger (runs_app migration 0013) gives each new entry its project's next `seq`, the
  previous entry's hash as `prev_hash`, and `hash` = SHA-256(prev_hash || mac), under the row lock of the
  project's AuditChainHead, so concurrent writers queue instead of forking the chain (per project: other
  projects do not wait). An entry taken out of the chain, in the middle or at the end, breaks a link or
  disagrees with the head. The trigger, not the application, computes these, so no INSERT escapes it.

The runtime role (`manage.py runtime_role`) may only INSERT and SELECT here; UPDATE, DELETE and TRUNCATE
are refused by privilege and, for UPDATE/DELETE, by trigger. The owner could still rewrite the table and
recompute the chain: record the heads `verify_audit` prints somewhere the database's owner cannot write
to make that visible too.
"""

import datetime as dt
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, transaction
from django.db.models import Model, Q
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

from harness.actors import Actor
from harness.canonical import canonical_json
from harness.db import prepared_cursor
from harness.models import AuditChainHead, AuditEntry, AuditVerification, Project

GENESIS = "0" * 64  # the prev_hash of a project's first entry
_SALT = "harness.audit.entry"


def audit_record(
    *, project: Project | int, actor: Actor, action: str, target: Model, data: dict[str, Any] | None = None
) -> AuditEntry:
    """Write one audit entry inside the caller's transaction (it commits or rolls back with it): one
    INSERT, chained by the trigger."""
    project_id = project if isinstance(project, int) else project.pk
    entry = AuditEntry(
        project_id=project_id, actor=actor.label, action=action, target_type=type(target).__name__.lower(),
        target_id=str(target.pk),
        # As jsonb will give it back (tuples as lists, keys as strings), so the mac verifies on reading.
        data=json.loads(json.dumps(data or {})), created_at=timezone.now(),
    )
    entry.mac = entry_mac(entry_content(entry))
    # What `entry.save(force_insert=True)` runs, as one prepared statement: the ORM compiled that INSERT on every
    # entry, 18% of a reviewer's decision's CPU (issue 14). The chaining trigger fills seq, prev_hash and hash.
    with prepared_cursor() as cursor:
        cursor.execute(_INSERT_SQL, {
            "project": entry.project_id, "actor": entry.actor, "action": entry.action,
            "target_type": entry.target_type, "target_id": entry.target_id, "data": json.dumps(entry.data),
            "created_at": entry.created_at, "mac": entry.mac,
        })
        entry.pk = cursor.fetchone()[0]
    entry._state.adding, entry._state.db = False, DEFAULT_DB_ALIAS
    return entry


_INSERT_SQL = """
INSERT INTO harness_auditentry (project_id, actor, action, target_type, target_id, data, created_at, seq, prev_hash,
                                hash, mac)
VALUES (%(project)s, %(actor)s, %(action)s, %(target_type)s, %(target_id)s, %(data)s::jsonb, %(created_at)s, NULL,
        '', '', %(mac)s)
RETURNING id
"""


def entry_content(entry: AuditEntry) -> list[Any]:
    """What the mac covers: everything the entry says, and when."""
    return entry_content_of(project_id=entry.project_id, actor=entry.actor, action=entry.action,
                            target_type=entry.target_type, target_id=entry.target_id, data=entry.data,
                            created_at=entry.created_at)


def entry_content_of(*, project_id: int, actor: str, action: str, target_type: str, target_id: str, data: Any,
                     created_at: dt.datetime) -> list[Any]:
    when = created_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return [int(project_id), actor, action, target_type, target_id, data, when]


def entry_mac(content: list[Any], *, secret: str | None = None) -> str:
    return salted_hmac(_SALT, canonical_json(content), secret=secret, algorithm="sha256").hexdigest()


def link_hash(prev_hash: str, mac: str) -> str:
    """What the trigger computes: SHA-256 over the previous entry's hash and this entry's mac (as bytes)."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + bytes.fromhex(mac)).hexdigest()


def _mac_verifies(content: list[Any], mac: str) -> bool:
    # Entries written before a SECRET_KEY rotation verify with the old key kept in SECRET_KEY_FALLBACKS.
    return any(constant_time_compare(entry_mac(content, secret=secret), mac)
               for secret in [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])])


def entry_break(*, content: list[Any], seq: int | None, prev_hash: str, hash_: str, mac: str,
                predecessor_hash: str | None) -> str | None:
    """Why one entry cannot be trusted, or None: its mac, its own link, and its link to the entry before it
    (`predecessor_hash`: that entry's hash, None when there is none)."""
    if seq is None or not hash_:
        return "the entry is not in the chain (inserted around the chaining trigger)"
    if not mac or not _mac_verifies(content, mac):
        return "the entry's mac does not verify: it was not written by the application, or was altered"
    try:
        if link_hash(prev_hash, mac) != hash_:
            return "the entry's hash does not match its content"
    except ValueError:
        return "the entry's hashes are not hex"
    expected_prev = GENESIS if seq == 1 else predecessor_hash
    if expected_prev is None:
        return f"entry {seq - 1} of the chain is missing"
    if prev_hash != expected_prev:
        return f"the entry does not link to entry {seq - 1} of the chain"
    return None


@dataclass(frozen=True)
class ChainBreak:
    project_id: int
    seq: int | None
    entry_id: int | None
    reason: str


@dataclass(frozen=True)
class ChainReport:
    project_id: int
    entries: int  # the entries walked (after `since`, when given)
    head_seq: int
    head_hash: str
    breaks: list[ChainBreak]
    # The end of the chain's sound prefix: entries 1..verified_seq verified, the last with this hash.
    verified_seq: int = 0
    verified_hash: str = GENESIS


# Where a walk may start instead of entry 1: a project's (seq, hash) verified before.
Since = dict[int, tuple[int, str]]


def audit_chain_verify(*, project_ids: list[int] | None = None, since: Since | None = None) -> Iterator[ChainReport]:
    """Walk each project's chain from its first entry, or from the entry after `since[project]` (one
    project at a time, entries streamed).

    1. Every entry: in the chain, its mac verifies, its hash is its link, it links to the one before.
    2. The seqs run 1..n without a gap or a repeat (a gap is an entry deleted).
    3. The head names the last entry (an entry cut off the end leaves the head ahead of the chain).
    4. From `since`: the entry it names still has the hash it had, so nothing before it was rewritten
       and re-chained (an entry altered without re-chaining shows only to a walk from the start).
    """
    ids = project_ids if project_ids is not None else sorted(
        set(AuditEntry.objects.values_list("project_id", flat=True).distinct())
        | set(AuditChainHead.objects.values_list("project_id", flat=True)))
    for project_id in ids:
        yield _verify_project(project_id, (since or {}).get(project_id))


def _verify_project(project_id: int, since: tuple[int, str] | None = None) -> ChainReport:
    breaks: list[ChainBreak] = []
    previous: tuple[int, str] | None = None  # (seq, hash) of the entry before
    sound: tuple[int, str] = (0, GENESIS)  # the last entry before the first break
    count = 0
    entries = AuditEntry.objects.filter(project_id=project_id).order_by("seq", "id")
    if since is not None and since[0] > 0:
        entries = entries.filter(Q(seq__gt=since[0]) | Q(seq__isnull=True))
        kept = AuditEntry.objects.filter(project_id=project_id, seq=since[0]).values_list("pk", "hash").first()
        if kept is not None and kept[1] == since[1]:
            previous = sound = since
        else:
            # Whatever changed there may have changed anything before it: the sound prefix is unknown.
            breaks.append(ChainBreak(project_id, since[0], kept[0] if kept else None, (
                f"entry {since[0]} is not the one verified before: the chain was rewritten up to it" if kept
                else f"entry {since[0]}, the last one verified before, is missing") + " (verify from the first entry)"))
            previous = (since[0], kept[1] if kept else "")
    for entry in entries.iterator(chunk_size=2000):
        count += 1
        expected_seq = 1 if previous is None else previous[0] + 1
        gap = entry.seq is not None and entry.seq != expected_seq
        if entry.seq is not None and gap:
            breaks.append(ChainBreak(project_id, expected_seq, None,
                                     f"entries {expected_seq}..{entry.seq - 1} of the chain are missing"
                                     if entry.seq > expected_seq else f"entry {entry.seq} appears twice"))
        # After a gap the link to the missing entry is not checked again: the gap is the break.
        predecessor = entry.prev_hash if gap else (previous[1] if previous is not None else None)
        reason = entry_break(content=entry_content(entry), seq=entry.seq, prev_hash=entry.prev_hash,
                             hash_=entry.hash, mac=entry.mac, predecessor_hash=predecessor)
        if reason is not None:
            breaks.append(ChainBreak(project_id, entry.seq, entry.pk, reason))
        if entry.seq is not None:
            previous = (entry.seq, entry.hash)
            if not breaks:
                sound = previous
    head = AuditChainHead.objects.filter(project_id=project_id).first()
    last_seq, last_hash = previous if previous is not None else (0, GENESIS)
    if head is None and count:
        breaks.append(ChainBreak(project_id, None, None, "the chain has entries but no head"))
    elif head is not None and (head.seq, head.hash) != (last_seq, last_hash):
        breaks.append(ChainBreak(project_id, head.seq, None,
                                 f"the head names entry {head.seq}, the chain ends at entry {last_seq}: "
                                 "entries were taken off its end" if head.seq > last_seq
                                 else "the head does not name the chain's last entry"))
    return ChainReport(project_id, count, head.seq if head else 0, head.hash if head else GENESIS, breaks,
                       verified_seq=sound[0], verified_hash=sound[1])


def audit_chain_check(*, project_ids: list[int] | None, checked_by: str, from_start: bool = False
                      ) -> list[ChainReport]:
    """Verify each project's chain (every project's: None) and keep the outcome as its AuditVerification.

    1. Start after the entries the last check found sound (unless `from_start`, or none were): a check
       costs the entries written since, not the whole chain.
    2. Walk with audit_chain_verify outside any transaction: a long walk holds no lock and no snapshot.
    3. Store each project's outcome in a short transaction of its own, unless a check that began later
       stored its outcome first (two at once: the later one saw the newer chain).
    A check changes no decision or memory, so it is not itself an audit entry (one would also leave the
    chain one entry ahead of every check); the stored row says who checked, and when.
    """
    started = timezone.now()
    stored = AuditVerification.objects.filter(verified_seq__gt=0)
    if project_ids is not None:
        stored = stored.filter(project_id__in=project_ids)
    since = {} if from_start else {v.project_id: (v.verified_seq, v.verified_hash) for v in stored}
    reports = list(audit_chain_verify(project_ids=project_ids, since=since))
    for report in reports:
        _verification_store(report, started=started, checked_by=checked_by,
                            from_start=report.project_id not in since)
    return reports


def _verification_store(report: ChainReport, *, started: dt.datetime, checked_by: str, from_start: bool) -> None:
    first = report.breaks[0] if report.breaks else None
    values = {
        "verified_seq": report.verified_seq, "verified_hash": report.verified_hash, "head_seq": report.head_seq,
        "breaks": len(report.breaks), "broken_seq": first.seq if first else None,
        "broken_entry_id": first.entry_id if first else None, "broken_reason": first.reason if first else "",
        "entries_walked": report.entries, "from_start": from_start, "checked_at": started,
        "checked_by": checked_by,
    }
    with transaction.atomic():
        AuditVerification.objects.get_or_create(project_id=report.project_id,
                                                defaults={"checked_at": started, "checked_by": checked_by})
        AuditVerification.objects.filter(project_id=report.project_id, checked_at__lte=started).update(**values)

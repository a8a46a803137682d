"""Trimming and compacting a session's history (issue 20, part 2): the explicit operations that make a long
conversation short again, through every door (API, console, admin) with one audited event each.

- `session_items_trim` keeps the newest N items and removes the rest.
- `session_items_compact` replaces a seq range with one summary item that the agent (or a person) wrote.

What stays true:
- Append-only holds for what remains: no remaining item is renumbered or rewritten. `last_seq` never goes back,
  so the next append numbers on from it (a removed seq is a gap, as after pop and clear).
- The summary stands where the range stood: it takes the seq of the newest item it replaced. That seq is the one
  place a seq names new content, and on purpose: a reader whose cursor is inside the range ("items after N",
  first_seq <= N < last_seq) still gets the summary of what it missed; a reader past the range had read the
  originals already. The audit entry names the range and the summary, so nobody mistakes it for the original.
- What was removed is recorded: the seq range, how many items, and the SHA-256 of their canonical JSON
  (`replaced_hash`: [{seq, role, content, run}, ...] in seq order), so a copy kept elsewhere can be proven to
  be exactly what went.
- Nothing else changes: tasks, checkpoints, approvals, effects and memory records are separate records that
  name items by (session, seq) at most, never by a foreign key, and a resume never reads the transcript.
- An item that a pending approval shows cannot be removed: the approval page shows the session's newest
  `APPROVAL_PAGE_ITEMS` items, and the model saw the items its context snapshots list; while a run of this
  session waits on a pending approval, removing any of those is refused (409 `item_shown_by_pending_approval`),
  so a reviewer never decides on evidence that has since vanished.
"""

import json
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from harness.actors import Actor
from harness.audit import audit_record
from harness.canonical import digest
from harness.db import prepared_cursor
from harness.http.errors import ConflictError, ValidationFailed
from harness.models import Project
from sessions_app.models import ItemRole, Session, SessionItem
from sessions_app.services import lock_for_removal

# How many of a session's newest items the approval page shows (runs_app.views.approvals, approval detail).
APPROVAL_PAGE_ITEMS = 10
MAX_SUMMARY_CHARS = 200_000


@dataclass(frozen=True)
class Trimmed:
    """What a trim or a compaction removed: how many items, their seq range and the hash of their canonical
    JSON (None and "" when nothing went), the summary item a compaction put in their place, and the
    session's `last_seq` (unchanged)."""

    removed: int
    first_seq: int | None
    last_seq: int | None
    replaced_hash: str
    summary: SessionItem | None
    session_last_seq: int


# The seqs a pending approval of a run in this session shows: the approval page's newest items and every
# item its run's context snapshots handed to the model. Empty when no run of the session waits on one.
_SHOWN_SQL = """
WITH pending AS (
    SELECT a.id, a.run_id FROM runs_app_approvalrequest a JOIN runs_app_run r ON r.id = a.run_id
     WHERE r.session_id = %(sid)s AND r.project_id = %(pid)s AND a.status = 'pending'
)
SELECT (SELECT min(id) FROM pending),
       ARRAY(SELECT seq FROM (SELECT seq FROM sessions_app_sessionitem WHERE session_id = %(sid)s
                               ORDER BY seq DESC LIMIT %(shown)s) newest
              WHERE EXISTS (SELECT 1 FROM pending)
             UNION
             SELECT (jsonb_array_elements_text(c.item_seqs))::bigint FROM memory_app_contextsnapshot c
              WHERE c.run_id IN (SELECT run_id FROM pending) AND jsonb_typeof(c.item_seqs) = 'array')
"""

_REMOVE_SQL = """
DELETE FROM sessions_app_sessionitem WHERE session_id = %(sid)s AND seq BETWEEN %(first)s AND %(last)s
RETURNING seq, role, content::text, run_id
"""


def _refuse_if_shown(project: Project, session_id: int, first: int, last: int, current: dict[str, Any]) -> None:
    with prepared_cursor() as cursor:
        cursor.execute(_SHOWN_SQL, {"sid": session_id, "pid": project.pk, "shown": APPROVAL_PAGE_ITEMS})
        approval_id, shown = cursor.fetchone() or (None, [])
    hit = sorted(seq for seq in shown or [] if first <= seq <= last)
    if hit:
        raise ConflictError(
            f"Approval {approval_id} is pending and shows item(s) {', '.join(map(str, hit))}: decide it first.",
            code="item_shown_by_pending_approval", current_status=current["status"],
            current_version=current["version"], approval=approval_id, seqs=hit,
        )


def _remove(session_id: int, first: int, last: int) -> tuple[int, str]:
    """Delete the items with seq in [first, last]; how many went and the hash of what went."""
    with prepared_cursor() as cursor:
        cursor.execute(_REMOVE_SQL, {"sid": session_id, "first": first, "last": last})
        rows = sorted(cursor.fetchall())
    gone = [{"seq": seq, "role": role, "content": json.loads(content), "run": run} for seq, role, content, run in rows]
    return len(gone), digest(gone)


def session_items_trim(
    *, project: Project, session_id: int, actor: Actor, keep_last: int, expected_last_seq: int | None = None
) -> Trimmed:
    """Keep the newest `keep_last` items of the session and remove the older ones.

    1. Lock the session row (404 outside the project, 409 `session_terminated`, 409 `seq_conflict` as for pop).
    2. Find the cut: the seq of the `keep_last`-th newest item (seqs may have gaps). Nothing older: done.
    3. Refuse (409 `item_shown_by_pending_approval`) if a pending approval shows an item below the cut.
    4. Delete the items below the cut, hashing what went; audit `session.items_trimmed` (range, count, hash).
    """
    if keep_last < 0:
        raise ValidationFailed("keep_last must be zero or more.", code="invalid_keep_last")
    with transaction.atomic():
        current = lock_for_removal(project, session_id, expected_last_seq)
        items = SessionItem.objects.filter(session_id=session_id)
        oldest = items.order_by("seq").values_list("seq", flat=True).first()
        kept = list(items.order_by("-seq").values_list("seq", flat=True)[: keep_last + 1])
        if oldest is None or len(kept) <= keep_last:
            return Trimmed(0, None, None, "", None, current["last_seq"])
        last = kept[-1]  # the newest item that goes: all kept ones are above it
        _refuse_if_shown(project, session_id, oldest, last, current)
        removed, replaced_hash = _remove(session_id, oldest, last)
        audit_record(project=project, actor=actor, action="session.items_trimmed", target=Session(pk=session_id),
                     data={"keep_last": keep_last, "removed": removed, "first_seq": oldest, "last_seq": last,
                           "replaced_hash": replaced_hash})
        return Trimmed(removed, oldest, last, replaced_hash, None, current["last_seq"])


def session_items_compact(
    *, project: Project, session_id: int, actor: Actor, first_seq: int, last_seq: int, summary: Any,
    role: str = ItemRole.SYSTEM, expected_last_seq: int | None = None,
) -> Trimmed:
    """Replace the items with seq in [first_seq, last_seq] by one summary item (`role`, content `summary`).

    1. Lock the session row (the same checks as trim).
    2. The range must hold at least one item (409 `empty_range`); refuse if a pending approval shows one.
    3. Delete the range, hashing what went; insert the summary at the seq of the newest item it replaced.
    4. Audit `session.items_compacted`: the range, how many went, their hash, the summary's id and seq.
    """
    if first_seq < 1 or last_seq < first_seq:
        raise ValidationFailed("A range is first_seq <= last_seq, both 1 or more.", code="invalid_range")
    if role not in ItemRole.values:
        raise ValidationFailed(f"Unknown item role {role!r}.", code="invalid_role")
    if summary is None or len(json.dumps(summary)) > MAX_SUMMARY_CHARS:
        raise ValidationFailed(f"A summary is JSON of at most {MAX_SUMMARY_CHARS} characters.", code="invalid_summary")
    with transaction.atomic():
        current = lock_for_removal(project, session_id, expected_last_seq)
        in_range = SessionItem.objects.filter(session_id=session_id, seq__gte=first_seq, seq__lte=last_seq)
        newest = in_range.order_by("-seq").values_list("seq", flat=True).first()
        if newest is None:
            raise ConflictError(
                f"No item has a seq between {first_seq} and {last_seq}.", code="empty_range",
                current_status=current["status"], current_version=current["version"],
            )
        _refuse_if_shown(project, session_id, first_seq, last_seq, current)
        removed, replaced_hash = _remove(session_id, first_seq, last_seq)
        item = SessionItem.objects.create(session_id=session_id, seq=newest, role=role, content=summary)
        audit_record(project=project, actor=actor, action="session.items_compacted", target=Session(pk=session_id),
                     data={"first_seq": first_seq, "last_seq": last_seq, "removed": removed,
                           "replaced_hash": replaced_hash, "summary_item": item.pk, "summary_seq": item.seq})
        return Trimmed(removed, first_seq, last_seq, replaced_hash, item, current["last_seq"])

"""Write operations on sessions and their items. Every door calls these, nothing else writes."""

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from django.db import transaction

from harness import fields
from harness.actors import Actor
from harness.audit import audit_record
from harness.db import api_time_sql, prepared_cursor
from harness.http.auth import CALLER_HOLDS, CALLER_SQL, TokenCheck, caller_params
from harness.http.errors import ConflictError, NotFoundError, ValidationFailed
from harness.http.idempotency import Claim, KeyTaken, claim_params, claim_sql, execute_claimed
from harness.models import Project
from harness.refs import create_with_ref
from harness.transitions import cas_transition_row
from sessions_app.models import SESSION_MACHINE, ItemRole, Session, SessionItem, SessionStatus
from sessions_app.signals import session_awaiting_user


class NewItem(TypedDict, total=False):
    role: str
    content: Any
    run_id: int | None


MAX_ITEMS_PER_APPEND = 500
_ROLES = frozenset(ItemRole.values)


def session_create(
    *,
    project: Project,
    role: str,
    memory_policy: str,
    metadata: dict[str, Any] | None = None,  # the client's JSON object, kept as given
    ref: str = "",
    context_budget_chars: int = 4000,
    context_items: int = 20,
    end_user: str = "",
) -> Session:
    """Open a session; a `ref` the project has already is 409 `already_exists` with that session's `id`."""
    return create_with_ref(Session, lambda: Session.objects.create(
        project=project, role=role, memory_policy=memory_policy, metadata=metadata or {}, ref=ref,
        context_budget_chars=context_budget_chars, context_items=context_items, end_user=end_user.strip(),
    ), project_id=project.pk, ref=ref, constraint="session_ref_unique")


def session_transition(*, project: Project, session_id: int, to: str, expected_version: int | None) -> Session:
    """Move a session (a compare-and-set when `expected_version` is given).

    Most moves are one statement, atomic by itself: the transition's UPDATE returns the row. A session that
    starts waiting for its user is announced (sessions_app.signals.session_awaiting_user) in the move's own
    transaction, so what the runs app writes for it (a checkpoint of the running run) commits with the move.
    """
    def move() -> Session:
        return cas_transition_row(
            Session.objects.filter(project=project),
            pk=session_id,
            machine=SESSION_MACHINE,
            to=to,
            expected_version=expected_version,
        )

    if to != SessionStatus.AWAITING_USER:
        return move()
    with transaction.atomic():
        session = move()
        session_awaiting_user.send(sender=Session, project_id=project.pk, session=session)
        return session


def session_items_append(
    *,
    project: Project,
    session_id: int,
    items: Sequence[NewItem],
    expected_last_seq: int | None = None,
    claim: Claim | None = None,
    caller: TokenCheck | None = None,
) -> list[SessionItem]:
    """Append a batch of items atomically; the server assigns gap-free `seq` values.

    1. Validate roles and that every referenced run belongs to this session.
    2. Bump the session's `last_seq` by the batch size (guarded by `expected_last_seq` when given)
       and insert the items numbered from the old value, in one statement on PostgreSQL; with a `claim`
       (the API's Idempotency-Key), that statement also records the reply under the key
       (harness.http.idempotency.Claim), or raises KeyTaken and writes nothing; with a `caller` (the plain path's
       harness.http.auth.TokenCheck), it writes nothing unless the caller's token holds, and the refusal is explained
       as any other (the plain path then asks whether the token was the reason).
    3. If no row was bumped, say why: missing session, terminated session, or a stale expected seq.
    """
    if not items:
        raise ValidationFailed("An append needs at least one item.", code="empty_batch")
    if len(items) > MAX_ITEMS_PER_APPEND:
        raise ValidationFailed(f"At most {MAX_ITEMS_PER_APPEND} items per append.", code="batch_too_large")
    for item in items:
        if item.get("role") not in _ROLES:
            raise ValidationFailed(f"Unknown item role {item.get('role')!r}.", code="invalid_role")
    run_ids = {int(run_id) for item in items if (run_id := item.get("run_id"))}
    if run_ids:
        # The runs app sits above this one (tests/test_architecture.py): the item's own foreign key, declared by
        # name ("runs_app.Run"), names the model to check against, so nothing here imports it.
        run_model = SessionItem._meta.get_field("run").related_model
        found = run_model._default_manager.filter(pk__in=run_ids, session_id=session_id, project=project).count()
        if found != len(run_ids):
            raise ValidationFailed("A referenced run is not in this session.", code="run_not_in_session")

    # One statement, atomic by itself: no BEGIN/COMMIT round trips around it on the hot path.
    rows = _append(project.pk, session_id, items, expected_last_seq, claim, caller)
    if not rows:
        if claim is not None and claim.taken():
            raise KeyTaken(claim)
        _explain_refused_append(project, session_id, expected_last_seq)
    return [
        SessionItem(
            id=row[0],
            session_id=session_id,
            seq=row[1],
            role=item["role"],
            content=item.get("content"),
            run_id=item.get("run_id"),
            created_at=row[2],
        )
        for row, item in zip(rows, items, strict=True)
    ]


# The API's reply to the append (sessions_app.api.item_out for each item), as the claimed key records it.
_APPEND_REPLY = f"""
SELECT jsonb_build_object(
           'items', jsonb_agg(jsonb_build_object(
               'id', ins.id, 'session', %(sid)s::bigint, 'seq', ins.seq, 'role', ins.role, 'content', ins.content,
               'run', ins.run_id, 'created_at', ({api_time_sql("ins.created_at")})::jsonb) ORDER BY ins.seq),
           'last_seq', max(ins.seq))
  FROM ins HAVING count(*) > 0"""  # noqa: S608 - the text put in is this module's and harness's own SQL
_APPEND_SQL = f"""
-- The counter bump touches no indexed column, so PostgreSQL can make it a HOT update.
WITH {CALLER_SQL}, bumped AS (
    UPDATE sessions_app_session
       SET last_seq = last_seq + %(n)s
     WHERE id = %(sid)s AND project_id = %(pid)s AND status <> 'terminated'
       AND (%(expected)s::bigint IS NULL OR last_seq = %(expected)s::bigint) AND {CALLER_HOLDS}
 RETURNING last_seq
), ins AS (
    INSERT INTO sessions_app_sessionitem (session_id, seq, role, content, run_id, created_at)
    SELECT %(sid)s, bumped.last_seq - %(n)s + i.ord, i.item->>0, i.item->1, (i.item->>2)::bigint, now()
      FROM bumped, json_array_elements(%(items)s::json) WITH ORDINALITY AS i(item, ord)
    RETURNING id, seq, role, content, run_id, created_at
), claim AS ({claim_sql(_APPEND_REPLY)})
SELECT id, seq, created_at FROM ins
"""  # noqa: S608 - as above; every value is a bound parameter


def _append(
    project_id: int, session_id: int, items: Sequence[NewItem], expected: int | None, claim: Claim | None,
    caller: TokenCheck | None,
) -> list[tuple[int, int, dt.datetime]]:
    """The appended rows' (id, seq, created_at), in seq order; none if the append was refused."""
    params = {
        "n": len(items),
        "sid": session_id,
        "pid": project_id,
        "expected": expected,
        # One JSON text of [role, content, run] triples, not three arrays: psycopg dumps an array parameter in
        # Python, element by element (a third of the append's client-side CPU in statements; bench/README.md).
        # json, not jsonb: each content goes into its (json) column as the text written here (harness.fields).
        "items": fields.dumps([[item["role"], item.get("content"), item.get("run_id")] for item in items]),
        **claim_params(claim),
        **caller_params(caller),
    }
    with prepared_cursor() as cursor:
        execute_claimed(cursor, _APPEND_SQL, params, claim)
        return sorted(cursor.fetchall(), key=lambda row: row[1])


def _explain_refused_append(project: Project, session_id: int, expected: int | None) -> None:
    current = Session.objects.filter(pk=session_id, project=project).values("status", "version", "last_seq").first()
    if current is None:
        raise NotFoundError(f"Session {session_id} does not exist.")
    if current["status"] == SessionStatus.TERMINATED:
        raise ConflictError(
            "A terminated session takes no more items.",
            code="session_terminated",
            current_status=current["status"],
            current_version=current["version"],
        )
    raise ConflictError(
        f"The session's last seq is {current['last_seq']}, not {expected}.",
        code="seq_conflict",
        current_status=current["status"],
        current_version=current["version"],
        last_seq=current["last_seq"],
    )


# --- removing items: what the Agents SDK's pop_item() and clear_session() need ----------------------------
#
# Items are append-only (a trigger refuses UPDATE) but may be removed whole. A removed item's seq stays a
# gap: `last_seq` never goes back and the next append numbers on from it, so a reader's cursor ("items after
# seq N") stays valid and never sees a new item under a seq it has already read. Each removal is audited
# (who, which seqs) in the same transaction, so the console can show what went and who took it.


def lock_for_removal(project: Project, session_id: int, expected_last_seq: int | None) -> Any:
    """Lock the session row (appends, pops and clears of one session queue up behind each other, so the
    statement after this one sees every item committed before it) and check it may lose items."""
    current = (
        Session.objects.select_for_update().filter(pk=session_id, project=project)
        .values("status", "version", "last_seq").first()
    )
    if current is None:
        raise NotFoundError(f"Session {session_id} does not exist.")
    if current["status"] == SessionStatus.TERMINATED:
        raise ConflictError(
            "A terminated session's items are kept as they are.", code="session_terminated",
            current_status=current["status"], current_version=current["version"],
        )
    if expected_last_seq is not None and current["last_seq"] != expected_last_seq:
        raise ConflictError(
            f"The session's last seq is {current['last_seq']}, not {expected_last_seq}.", code="seq_conflict",
            current_status=current["status"], current_version=current["version"], last_seq=current["last_seq"],
        )
    return current


_POP_SQL = """
DELETE FROM sessions_app_sessionitem
 WHERE id = (SELECT id FROM sessions_app_sessionitem WHERE session_id = %(sid)s ORDER BY seq DESC LIMIT 1)
RETURNING id, seq, role, content::text, run_id, created_at
"""


@dataclass(frozen=True)
class Removal:
    """What a pop or a clear took: the popped item (None: the session had none), how many went, and the
    session's `last_seq`, unchanged by the removal."""

    item: SessionItem | None
    removed: int
    last_seq: int


def session_item_pop(
    *, project: Project, session_id: int, actor: Actor, expected_last_seq: int | None = None
) -> Removal:
    """Remove the session's newest item and return it (`item` None when the session has none).

    1. Lock the session row; 404 if it is not in the project, 409 `session_terminated` on a terminated
       session, 409 `seq_conflict` when `expected_last_seq` is given and is not the session's `last_seq`.
    2. Delete the item with the highest seq, returning it (one statement).
    3. Audit `session.item_popped` with its seq, as `actor`.
    The popped seq is never handed out again: `last_seq` stays where it is and the next append gets
    `last_seq + 1`, so the newest remaining item's seq may be below `last_seq`.
    """
    with transaction.atomic():
        current = lock_for_removal(project, session_id, expected_last_seq)
        with prepared_cursor() as cursor:
            cursor.execute(_POP_SQL, {"sid": session_id})
            row = cursor.fetchone()
        if row is None:
            return Removal(item=None, removed=0, last_seq=current["last_seq"])
        item = SessionItem(id=row[0], session_id=session_id, seq=row[1], role=row[2], content=json.loads(row[3]),
                           run_id=row[4], created_at=row[5])
        audit_record(project=project, actor=actor, action="session.item_popped", target=Session(pk=session_id),
                     data={"item": item.pk, "seq": item.seq, "role": item.role, "last_seq": current["last_seq"]})
        return Removal(item=item, removed=1, last_seq=current["last_seq"])


_CLEAR_SQL = """
WITH gone AS (DELETE FROM sessions_app_sessionitem WHERE session_id = %(sid)s RETURNING seq)
SELECT count(*), min(seq), max(seq) FROM gone
"""


def session_items_clear(
    *, project: Project, session_id: int, actor: Actor, expected_last_seq: int | None = None
) -> Removal:
    """Remove every item of the session; returns how many went.

    The same checks as `session_item_pop` (404, `session_terminated`, `seq_conflict`), then one DELETE,
    audited as `session.items_cleared` (how many, the lowest and highest seq) when anything went. The
    session itself, its runs, checkpoints and memory stay; `last_seq` stays too, so the next append
    continues the numbering instead of reusing a removed seq.
    """
    with transaction.atomic():
        current = lock_for_removal(project, session_id, expected_last_seq)
        with prepared_cursor() as cursor:
            cursor.execute(_CLEAR_SQL, {"sid": session_id})
            removed, first, last = cursor.fetchone() or (0, None, None)
        if removed:
            audit_record(project=project, actor=actor, action="session.items_cleared", target=Session(pk=session_id),
                         data={"removed": removed, "first_seq": first, "last_seq": last})
        return Removal(item=None, removed=removed, last_seq=current["last_seq"])

"""Handoffs: a run hands a bounded, blind job to another session and waits for its one result.

The lifecycle is HANDOFF_MACHINE (runs_app.machines): issued -> accepted -> returned -> consumed, and
issued | accepted -> expired | cancelled. Every move is a compare-and-set through
`harness.transitions.cas_transition_row`; the API, the console, the admin and the worker call these
functions (DESIGN.md, "Handoff"; seed 002, sections 02, 09, 11 and 13.8).

- The packet is built here from what the issuing agent may set, fingerprinted over all of it, stored once
  and never updated (a trigger refuses it: migration 0010). The receiver reads the packet and nothing of
  the origin's transcript (memory_app.context projects it for the receiver's run). The issue makes the
  receiver its own credential, a `handoff_receiver` token that reads, accepts and returns this handoff and
  nothing else (harness.http.permissions), expiring at the deadline and revoked when the handoff is closed: a
  project's agent token reads the whole project, the origin's items, events and checkpoints included.
- The result names the packet's fingerprint it answers; it is refused for another packet, for a packet
  that no longer hashes to its fingerprint, a second time, after the deadline, or against the packet's
  output schema. The resume worker consumes it once into the origin run (worker.steps), with a receipt.
- Independence (seed 002, section 02: "a worker called semantic_reviewer without its own invocation/session
  and a bounded blind job is not independent"): every accept and return records each check and whether
  the work counts as an independent review.
"""

import datetime as dt
import json
import re
import uuid
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet
from django.db.models.functions import Now
from django.utils import timezone
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from harness.actors import Actor
from harness.canonical import digest
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.http.permissions import TokenRole
from harness.models import ApiToken, Project
from harness.tenancy import Role, decision_refusal
from harness.tokens import api_token_create, api_tokens_revoke
from harness.transitions import cas_transition_row
from runs_app.artifacts import artifact_fingerprint, bare_fingerprint
from runs_app.machines import HANDOFF_MACHINE
from runs_app.models import Handoff, HandoffStatus, Run, RunStatus, Task
from runs_app.services.runs import run_create, run_event_append, run_transition
from runs_app.signals import resume_requested
from sessions_app.models import Session, SessionRole, SessionStatus

MAX_INPUTS = 100
MAX_CAPABILITIES = 100
MAX_DEADLINE = dt.timedelta(days=30)
_HEX64 = re.compile(r"[0-9a-f]{64}")


def _handoffs(project: Project | int) -> QuerySet[Handoff]:
    return Handoff.objects.filter(project=project)


# --- issue ----------------------------------------------------------------------------------------


def handoff_issue(
    *,
    project: Project,
    origin_run_id: int,
    receiver_session_id: int,
    objective: str,
    inputs: list[dict[str, Any]],
    allowed_capabilities: list[str],
    output_schema: dict[str, Any],
    deadline: dt.datetime,
    actor: Actor,
    cursor: dict[str, Any] | None = None,
    expected_version: int | None = None,
    lease_owner: str | None = None,
) -> Handoff:
    """Issue a job packet to a receiver session and move the origin run to `waiting_external`.

    1. Check the parts: the deadline ahead (at most 30 days), the output schema a JSON Schema, each input's
       fingerprint its value's digest (an inline `value`) or the origin task's artifact of that name (`artifact`).
    2. Build the packet (objective, inputs, allowed capabilities, output schema, deadline, the origin run and
       its cursor, the receiver) and fingerprint it (SHA-256 of its canonical JSON).
    3. In one transaction: make the receiver's token (role `handoff_receiver`, expiring at the deadline; its
       secret is on the returned instance, `receiver_secret`, and nowhere else), insert the handoff (one open
       handoff per run: 409 `handoff_open`), check that the stored packet still hashes to the fingerprint (jsonb
       keeps numbers its own way: 1e2 comes back as 100), and move the origin run running -> waiting_external
       with a `handoff.issued` event (one statement; it releases the lease).
    """
    now = timezone.now()
    if not now < deadline <= now + MAX_DEADLINE:
        raise ValidationFailed("The deadline is in the future, at most 30 days ahead.", code="invalid_deadline")
    objective = objective.strip()
    if not objective:
        raise ValidationFailed("A handoff needs an objective.", code="invalid")
    try:
        Draft202012Validator.check_schema(output_schema)
    except SchemaError as exc:
        raise ValidationFailed(f"output_schema is not a JSON Schema: {exc.message}", code="invalid_output_schema"
                               ) from None
    run = Run.objects.filter(project=project, pk=origin_run_id).select_related("task").first()
    if run is None:
        raise NotFoundError(f"Run {origin_run_id} does not exist.")
    receiver = Session.objects.filter(project=project, pk=receiver_session_id).only("id", "role", "status").first()
    if receiver is None:
        raise NotFoundError(f"Session {receiver_session_id} does not exist.")
    if receiver.status in (SessionStatus.TERMINATED, SessionStatus.STALE):
        raise ConflictError(f"The receiver session is {receiver.status}.", code="receiver_unavailable",
                            current_status=receiver.status)
    packet_inputs = [_packet_input(item, run.task) for item in inputs]
    if len({i["name"] for i in packet_inputs}) != len(packet_inputs):
        raise ValidationFailed("Each input has its own name.", code="duplicate_input")
    packet: dict[str, Any] = {
        "objective": objective,
        "inputs": packet_inputs,
        "allowed_capabilities": list(dict.fromkeys(allowed_capabilities)),
        "output_schema": output_schema,
        "deadline": deadline.astimezone(dt.UTC).isoformat(),
        "origin": {"run": run.pk, "cursor": run.cursor if cursor is None else cursor},
        "receiver": {"session": receiver.pk, "role": receiver.role},
    }
    fingerprint = digest(packet)
    with transaction.atomic():
        token, secret = api_token_create(project=project, name=f"handoff-receiver:session-{receiver.pk}",
                                         role=TokenRole.HANDOFF_RECEIVER, expires_at=deadline)
        try:
            with transaction.atomic():
                handoff = Handoff.objects.create(
                    project=project, origin_run=run, receiver_session=receiver, packet=packet,
                    packet_fingerprint=fingerprint, deadline=deadline, issued_by=actor.label, receiver_token=token,
                )
        except IntegrityError:
            raise ConflictError("The run already waits on an open handoff.", code="handoff_open",
                                current_status=run.status, current_version=run.version) from None
        handoff.refresh_from_db(fields=["packet"])
        if digest(handoff.packet) != fingerprint:
            raise ValidationFailed("A number in the packet does not survive JSON storage unchanged (write 100, "
                                   "not 1e2 or 100.0).", code="packet_not_canonical")
        run_transition(
            project=project, run_id=run.pk, to=RunStatus.WAITING_EXTERNAL, expected_version=expected_version,
            lease_owner=lease_owner, events=[("handoff.issued", {
                "handoff": handoff.pk, "receiver_session": receiver.pk, "packet_fingerprint": fingerprint,
                "deadline": packet["deadline"]})],
        )
        handoff.receiver_secret = secret
        return handoff


def _packet_input(item: dict[str, Any], task: Task | None) -> dict[str, Any]:
    """One input as the packet holds it: name, fingerprint, and the inline value or the artifact it names."""
    name = str(item.get("name") or "")
    fingerprint = str(bare_fingerprint(str(item.get("fingerprint") or "")))
    if not name or not _HEX64.fullmatch(fingerprint):
        raise ValidationFailed("Each input has a name and a fingerprint (64 hex digits).", code="invalid_input")
    entry: dict[str, Any] = {"name": name, "fingerprint": fingerprint}
    if "value" in item:
        if digest(item["value"]) != fingerprint:
            raise ValidationFailed(f"Input {name!r}: the fingerprint is not its value's digest.",
                                   code="input_fingerprint_mismatch", input=name)
        entry["value"] = item["value"]
    if item.get("artifact"):
        artifact = str(item["artifact"])
        refs = (task.artifact_refs or {}) if task is not None else {}
        if artifact not in refs:
            raise ValidationFailed(f"Input {name!r}: the origin run's task has no artifact {artifact!r}.",
                                   code="unknown_artifact", input=name)
        if artifact_fingerprint(refs[artifact]) != fingerprint:
            raise ValidationFailed(f"Input {name!r}: the artifact {artifact!r} has another fingerprint now.",
                                   code="input_fingerprint_mismatch", input=name)
        entry["artifact"] = artifact
    return entry


# --- accept ---------------------------------------------------------------------------------------


def handoff_accept(
    *, project: Project | int, handoff_id: int, receiver_run_id: int | None, actor: Actor,
    expected_version: int | None = None,
) -> Handoff:
    """The receiver takes the job with its own invocation: a run of the receiver session.

    1. The run is the receiver session's (409 `wrong_session` otherwise), never the origin run; without one
       (`receiver_run_id` None: a receiver holding only its handoff's token cannot make runs) a new run of the
       receiver session is made for it, in the acceptance's transaction.
    2. Record the independence checks (`independence`) with the acceptance.
    3. One conditional UPDATE issued -> accepted that also holds the deadline (the database's clock, as leases
       are): past it, 409 `handoff_expired`
       (the recovery pass moves it to expired and hands the origin run back).
    """
    handoff = _get(project, handoff_id)
    with transaction.atomic():
        if receiver_run_id is None:
            run = run_create(project=project if isinstance(project, Project) else Project.objects.get(pk=project),
                             session_id=handoff.receiver_session_id, task_mode="handoff",
                             active_agent=actor.label[:120])
        else:
            found = Run.objects.filter(project=project, pk=receiver_run_id).only("id", "session_id").first()
            if found is None:
                raise NotFoundError(f"Run {receiver_run_id} does not exist.")
            run = found
        if run.session_id != handoff.receiver_session_id or run.pk == handoff.origin_run_id:
            raise ConflictError("The receiving run must be a run of the receiver session (not the origin run).",
                                code="wrong_session", current_status=handoff.status, current_version=handoff.version)
        checks = independence(handoff, receiver_run_id=run.pk)
        try:
            accepted = cas_transition_row(
                _handoffs(project), pk=handoff_id, machine=HANDOFF_MACHINE, to=HandoffStatus.ACCEPTED,
                expected_version=expected_version, extra_filter=Q(deadline__gt=Now()),
                updates={"receiver_run_id": run.pk, "accepted_by": actor.label, "accepted_at": Now(),
                         "independence": checks},
            )
        except ConflictError as exc:
            raise _refusal(project, handoff_id, exc) from None
        run_event_append(project=accepted.project_id, run_id=accepted.origin_run_id, kind="handoff.accepted",
                         data={"handoff": accepted.pk, "receiver_run": run.pk, "by": actor.label,
                               "independent": checks["counts"]})
        run_event_append(project=accepted.project_id, run_id=run.pk, kind="handoff.received",
                         data={"handoff": accepted.pk, "packet_fingerprint": accepted.packet_fingerprint})
        return accepted


# --- return ---------------------------------------------------------------------------------------


def handoff_return(
    *,
    project: Project | int,
    handoff_id: int,
    packet_fingerprint: str,
    result: Any,
    actor: Actor,
    result_hash: str | None = None,
    expected_version: int | None = None,
) -> Handoff:
    """The receiver's one result, bound to the packet it answers; the origin run's resume is queued.

    1. The result's hash is the server's (a client-sent one must match: 400 `result_hash_mismatch`).
    2. Refused, with nothing written: for another packet (409 `packet_mismatch`), for a packet that no longer
       hashes to its fingerprint (409 `packet_altered`), a second time (409 `result_already_returned`), before
       acceptance, after cancellation or past the deadline (409 `handoff_not_accepted`, `handoff_cancelled`,
       `handoff_expired`), or when the output schema refuses it (400 `result_schema_mismatch`).
    3. Re-check independence (items copied since the acceptance count), then one conditional UPDATE
       accepted -> returned (at `expected_version`, the handoff's version the receiver read, when given: the
       API requires it) that holds the deadline and the fingerprint again; log it on the origin run and queue its
       resume after commit.
    """
    computed = digest(result)
    if result_hash is not None and result_hash != computed:
        raise ValidationFailed("result_hash is not the SHA-256 of the result's canonical JSON.",
                               code="result_hash_mismatch", expected_hash=computed)
    handoff = _get(project, handoff_id)
    _check_bound(handoff, packet_fingerprint)
    # Only an answer that may still land is checked against the schema; the write's guard decides the deadline
    # by the database's clock.
    if handoff.status == HandoffStatus.ACCEPTED and handoff.deadline > timezone.now():
        try:
            errors = sorted(Draft202012Validator(handoff.packet.get("output_schema") or {}).iter_errors(result),
                            key=lambda e: [str(p) for p in e.absolute_path])
        except Exception as exc:  # noqa: BLE001 - a schema check_schema let through but cannot apply (an unresolvable $ref)
            raise ValidationFailed(f"The packet's output schema cannot be applied: {exc}",
                                   code="output_schema_unusable") from None
        if errors:
            where = "/".join(str(p) for p in errors[0].absolute_path) or "(the result)"
            raise ValidationFailed(f"The result does not match the packet's output schema at {where}: "
                                   f"{errors[0].message}", code="result_schema_mismatch")
    checks = independence(handoff, receiver_run_id=handoff.receiver_run_id)
    with transaction.atomic():
        try:
            returned = cas_transition_row(
                _handoffs(project), pk=handoff_id, machine=HANDOFF_MACHINE, to=HandoffStatus.RETURNED,
                expected_version=expected_version,
                extra_filter=Q(deadline__gt=Now(), packet_fingerprint=packet_fingerprint),
                updates={"result": result, "result_hash": computed, "returned_by": actor.label, "returned_at": Now(),
                         "independence": checks},
            )
        except ConflictError as exc:
            raise _refusal(project, handoff_id, exc) from None
        if digest(returned.result) != computed:
            raise ValidationFailed("A number in the result does not survive JSON storage unchanged (write 100, "
                                   "not 1e2 or 100.0).", code="result_not_canonical")
        run_event_append(project=returned.project_id, run_id=returned.origin_run_id, kind="handoff.returned",
                         data={"handoff": returned.pk, "result_hash": computed, "by": actor.label,
                               "packet_fingerprint": returned.packet_fingerprint, "independent": checks["counts"]})
        origin = returned.origin_run_id
        transaction.on_commit(lambda: resume_requested.send(sender=Run, run_id=origin))
        return returned


def _check_bound(handoff: Handoff, packet_fingerprint: str) -> None:
    """The result answers this packet, and the packet is still the one that was issued."""
    if packet_fingerprint != handoff.packet_fingerprint:
        raise ConflictError("The result is bound to another packet than this handoff's.", code="packet_mismatch",
                            current_status=handoff.status, current_version=handoff.version,
                            packet_fingerprint=handoff.packet_fingerprint)
    if digest(handoff.packet) != handoff.packet_fingerprint:
        raise ConflictError("The handoff's packet no longer hashes to its fingerprint: it was changed after issue.",
                            code="packet_altered", current_status=handoff.status, current_version=handoff.version)


def _refusal(project: Project | int, handoff_id: int, exc: ConflictError) -> ConflictError:
    """Why a write on a handoff was refused, from the row read after it (and the deadline by the database's
    clock, as the write's guard read it), with a code that says so."""
    if exc.code == "version_conflict":
        return exc
    handoff = _handoffs(project).annotate(
        overdue=ExpressionWrapper(Q(deadline__lte=Now()), output_field=BooleanField())).filter(pk=handoff_id).first()
    if handoff is None:
        return exc
    code, detail = {
        HandoffStatus.ISSUED: ("handoff_not_accepted", "The handoff has not been accepted."),
        HandoffStatus.ACCEPTED: ("handoff_already_accepted", "The handoff was accepted already."),
        HandoffStatus.RETURNED: ("result_already_returned", "A result was returned already."),
        HandoffStatus.CONSUMED: ("result_already_returned", "A result was returned and consumed already."),
        HandoffStatus.EXPIRED: ("handoff_expired", "The handoff expired."),
        HandoffStatus.CANCELLED: ("handoff_cancelled", "The handoff was cancelled."),
    }[HandoffStatus(handoff.status)]
    if handoff.status in (HandoffStatus.ISSUED, HandoffStatus.ACCEPTED) and handoff.overdue:
        code, detail = "handoff_expired", f"The handoff's deadline passed at {handoff.deadline.isoformat()}."
    return ConflictError(detail, code=code, current_status=handoff.status, current_version=handoff.version)


def handoff_answer_by_person(*, project: Project, handoff_id: int, actor: Actor, result: Any,
                             expected_version: int | None = None) -> Handoff:
    """A person answers a handoff to a `human_reviewer` session from the console, in one transaction.

    1. Only a person (a console user) who reviews in the handoff's project, not while it is frozen, and only for
       a handoff whose receiver session's role is human_reviewer
       (409 `not_a_human_handoff`).
    2. Issued: the answer is the receiver session's own invocation, a run made for it (task mode
       `handoff_review`), which accepts the handoff (`handoff_accept`, independence recorded).
    3. `handoff_return` with the packet's fingerprint, refused as any return is; a refusal undoes the acceptance.

    `expected_version` is the handoff's version the page showed (the console's form carries it): a handoff that
    moved since is refused 409 version_conflict, nothing written.
    """
    if actor.user is None:
        raise Forbidden("Only a person answers a handoff in the console.", code="not_a_person")
    refusal = decision_refusal(actor.user, Role.REVIEWER, project, code="not_a_reviewer",
                               refused="Only reviewers of the handoff's project answer it.")
    if refusal is not None:  # the project is frozen, or the person does not review in it
        raise refusal
    handoff = _get(project, handoff_id)
    role = Session.objects.filter(pk=handoff.receiver_session_id).values_list("role", flat=True).get()
    if role != SessionRole.HUMAN_REVIEWER:
        raise ConflictError(f"The receiver session is a {role}: only a human_reviewer's handoff is answered here.",
                            code="not_a_human_handoff", current_status=handoff.status, current_version=handoff.version)
    if expected_version is not None and handoff.version != expected_version:
        raise ConflictError(f"Handoff {handoff_id} is at version {handoff.version}, not {expected_version}.",
                            code="version_conflict", current_status=handoff.status, current_version=handoff.version)
    with transaction.atomic():
        if handoff.status == HandoffStatus.ISSUED:
            run = run_create(project=project, session_id=handoff.receiver_session_id, task_mode="handoff_review",
                             active_agent=actor.label[:120])
            handoff = handoff_accept(project=project, handoff_id=handoff_id, receiver_run_id=run.pk, actor=actor,
                                     expected_version=handoff.version)
        return handoff_return(project=project, handoff_id=handoff_id, packet_fingerprint=handoff.packet_fingerprint,
                              result=result, actor=actor, expected_version=handoff.version)


# --- consume, cancel, expire ------------------------------------------------------------------------


def handoff_consume(*, project: Project | int, handoff_id: int, actor: Actor) -> Handoff:
    """returned -> consumed with a receipt: only the resume worker (the table's guard), inside the transaction
    that binds the result to the origin run, so the result is consumed exactly when it is bound."""
    return cas_transition_row(
        _handoffs(project), pk=handoff_id, machine=HANDOFF_MACHINE, to=HandoffStatus.CONSUMED, expected_version=None,
        actor=actor.kind, updates={"receipt": uuid.uuid4().hex, "consumed_at": timezone.now()},
    )


def handoff_cancel(*, project: Project | int, handoff_id: int, actor: Actor, reason: str,
                   expected_version: int | None = None) -> Handoff:
    """issued | accepted -> cancelled; the origin run goes back to running with the cancellation bound."""
    if not reason.strip():
        raise ValidationFailed("A cancellation needs a reason.", code="reason_required")
    return _close(project, handoff_id, HandoffStatus.CANCELLED, reason.strip(), actor.label, expected_version)


def handoff_expire_due() -> list[int]:
    """Expire open handoffs past their deadline by the database's clock (the recovery pass; as leases are, so
    a host whose clock runs fast expires nothing early); each origin run goes back to running with the expiry
    bound, for its agent to decide what next."""
    expired: list[int] = []
    due = Handoff.objects.filter(status__in=(HandoffStatus.ISSUED, HandoffStatus.ACCEPTED), deadline__lte=Now())
    for handoff_id, project_id in due.values_list("pk", "project_id"):
        try:
            _close(project_id, handoff_id, HandoffStatus.EXPIRED, "the deadline passed before a result", "recovery",
                   None, extra=Q(deadline__lte=Now()))
        except ConflictError:
            continue  # returned or cancelled just now
        expired.append(handoff_id)
    return expired


def _close(project: Project | int, handoff_id: int, to: str, reason: str, by: str, expected_version: int | None,
           extra: Q | None = None) -> Handoff:
    """End an open handoff without a result and hand its origin run back (if it still waits), in one transaction."""
    with transaction.atomic():
        closed = cas_transition_row(
            _handoffs(project), pk=handoff_id, machine=HANDOFF_MACHINE, to=to, expected_version=expected_version,
            extra_filter=extra, updates={"closed_reason": reason},
        )
        outcome = {"handoff": closed.pk, "outcome": str(to), "reason": reason, "by": by}
        # The job is gone: its receiver's credential goes with it (a returned one lapses at the deadline).
        if closed.receiver_token_id is not None:
            api_tokens_revoke(ApiToken.objects.filter(pk=closed.receiver_token_id))
        try:
            run_transition(project=closed.project_id, run_id=closed.origin_run_id, to=RunStatus.RUNNING,
                           expected_version=None, updates={"bound_result": outcome},
                           events=[(f"handoff.{to}", outcome)])
        except ConflictError:
            # The origin run no longer waits (a person failed or cancelled it): only the handoff ends.
            run_event_append(project=closed.project_id, run_id=closed.origin_run_id, kind=f"handoff.{to}",
                             data=outcome)
        return closed


def _get(project: Project | int, handoff_id: int) -> Handoff:
    handoff = _handoffs(project).filter(pk=handoff_id).first()
    if handoff is None:
        raise NotFoundError(f"Handoff {handoff_id} does not exist.")
    return handoff


# --- independence -----------------------------------------------------------------------------------


def independence(handoff: Handoff, *, receiver_run_id: int | None) -> dict[str, Any]:
    """Whether the receiver's work counts as an independent review, each check with why (stored, shown).

    Only a `semantic_reviewer` session's work can count (seed 002, section 02: the role alone is not
    independence), and only with all of: its own invocation (a run of its own, not the origin run), its own
    session (not the origin run's), a blind packet (no input carries an item of the origin's transcript),
    and no copy of the origin's items in its session. One statement reads the two copy checks.
    """
    origin_session = Run.objects.filter(pk=handoff.origin_run_id).values_list("session_id", flat=True).get()
    role = Session.objects.filter(pk=handoff.receiver_session_id).values_list("role", flat=True).get()
    shared = origin_session == handoff.receiver_session_id
    packet_copies, session_copies = _copies(handoff, origin_session, check_session=not shared)
    checks = [
        _check("reviewer_role", role == SessionRole.SEMANTIC_REVIEWER,
               f"the receiver session's role is {role}" + ("" if role == SessionRole.SEMANTIC_REVIEWER
                                                            else ": only a semantic_reviewer's work is a review")),
        _check("own_invocation", receiver_run_id is not None and receiver_run_id != handoff.origin_run_id,
               f"the receiver works in run {receiver_run_id}" if receiver_run_id is not None
               else "no receiving run yet"),
        _check("own_session", not shared,
               "the receiver session is the origin run's own session" if shared
               else f"session {handoff.receiver_session_id} is not the origin's session {origin_session}"),
        _check("blind_packet", not packet_copies,
               "an input of the packet is a copy of an item of the origin's transcript" if packet_copies
               else "no input of the packet is an item of the origin's transcript"),
        _check("no_copied_items", not (shared or session_copies),
               "the receiver session holds items of the origin's transcript" if (shared or session_copies)
               else "the receiver session holds no item of the origin's transcript"),
    ]
    return {"counts": all(c["ok"] for c in checks), "checks": checks}


def _check(name: str, ok: bool, why: str) -> dict[str, Any]:
    return {"check": name, "ok": ok, "why": why}


_COPIES_SQL = """
SELECT EXISTS (SELECT 1 FROM sessions_app_sessionitem o
                WHERE o.session_id = %(origin)s
                  AND (o.content::jsonb = ANY(%(values)s::jsonb[]) OR o.content->>'text' = ANY(%(texts)s::text[]))),
       %(check_session)s AND EXISTS (
           SELECT 1 FROM sessions_app_sessionitem o
             JOIN sessions_app_sessionitem c ON c.content::jsonb = o.content::jsonb
            WHERE o.session_id = %(origin)s AND c.session_id = %(receiver)s)
"""


def _copies(handoff: Handoff, origin_session: int, *, check_session: bool) -> tuple[bool, bool]:
    """(the packet carries an origin item, the receiver session holds one): compared as jsonb (the content is
    stored as json, as written: key order and spacing must not hide a copy), and an input string against an
    item's text."""
    values = [item["value"] for item in handoff.packet.get("inputs", []) if "value" in item]
    texts = [v for v in values if isinstance(v, str)]
    with connection.cursor() as cursor:
        cursor.execute(_COPIES_SQL, {"origin": origin_session, "receiver": handoff.receiver_session_id,
                                     "values": [json.dumps(v) for v in values], "texts": texts,
                                     "check_session": check_session})
        row = cursor.fetchone()
    return bool(row[0]), bool(row[1])

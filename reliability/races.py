"""Race experiments of issue 19: two outcomes offered at once for one record, many trials each.

Experiment 22: an approval's expiry (the recovery pass, `approval_expire_due`) racing reviewers' decisions
through the HTTP API, the deadline set within milliseconds of the moment they are released.
Experiment 23: one dispatched effect's result delivered concurrently through the API with two different
results (two deliverers each), so a result-hash conflict arrives while the first delivery is in flight.
Experiment 24: operators superseding one memory record at once through the API, each with its own content
(two of them with the same content, which takes the service's IntegrityError path).

Each trial's racers are threads released together at a barrier, each on its own database connection, each
through the real door (`django.test.Client` with a bearer token: the middleware, the view, the service).
What counts: the replies as the client got them (status and `code`), and SQL over the tables after each
trial (never the service's own return values): exactly one outcome stands, every loser got a 409 with a code
that says why, and nothing half-written is left (the row, its audit entries and run events agree).
"""

from __future__ import annotations

import datetime as dt
import json
import random
import time
import uuid
from collections import Counter
from typing import Any

from django.db import connection
from django.test import Client
from django.utils import timezone

from harness.actors import Actor
from memory_app.services import memory_write
from reliability.core import Result, command_for, experiment
from reliability.faults import broker_client, fresh_project
from runs_app.models import ApprovalRequest, RunStatus
from runs_app.services import (
    approval_expire_due,
    approval_request_create,
    effect_dispatch,
    effect_intend,
    run_transition,
)
from tests import factories
from tests.threads import run_concurrently


def _seconds(started: float) -> float:
    return round(time.monotonic() - started, 2)


def _post(token: str, path: str, body: dict) -> tuple[int, str]:
    """One POST through the whole stack, as an HTTP client sees it: (status, the reply's `code` or outcome)."""
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = client.post(path, data=json.dumps(body), content_type="application/json")
    try:
        data = json.loads(response.content or b"{}")
    except ValueError:
        data = {}
    return response.status_code, str(data.get("code") or data.get("outcome") or "")


def _rows(sql: str, params: list[Any]) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def _reviewer_token(project: Any, role: str) -> str:
    user = factories.make_user(f"{role}-{uuid.uuid4().hex[:10]}", role=role, projects=[project])
    return factories.make_personal_token(user)[1]


# --- 22. approval expiry racing a decision -----------------------------------------------------

TITLE_22 = "Approval expiry racing decisions: one outcome per approval, the losers told why"
DECIDERS, EXPIRERS = 2, 2


@experiment(22, TITLE_22)
def approval_expiry_race(quick: bool) -> Result:
    """Per trial: a pending approval whose deadline is the racers' firing moment, -5 to +40 ms; two
    reviewers decide (one approves, one rejects with a reason) through the API while two recovery passes
    expire what is due. Then, with SQL: the approval is approved, rejected or expired, and only that outcome's
    traces exist (its decider and decision time, one audit entry, one run event of its kind, none of another)."""
    trials = 15 if quick else 200
    started = time.monotonic()
    rng = random.Random(22)
    project = fresh_project("expiry-race")
    session = factories.make_session(project)
    tokens = [_reviewer_token(project, "reviewer") for _ in range(DECIDERS)]
    agent = Actor.for_agent("expiry-race-agent")
    outcomes: Counter[str] = Counter()
    loser_codes: Counter[str] = Counter()
    bad: list[dict] = []
    for trial in range(trials):
        run = factories.make_run(project, session=session)
        run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
        approval = approval_request_create(
            project=project, run_id=run.pk, tool="publish_chapter", arguments={"trial": trial},
            idempotency_key=f"expiry-race-{uuid.uuid4().hex}", actor=agent,
        )
        # Every racer fires at one moment, and the deadline falls within a few milliseconds of it (a decision
        # spends some of them in the middleware before its write): across trials some decisions land before
        # it, some after, some with the expiry's write in the same instant.
        fire_at = time.monotonic() + 0.25
        deadline = timezone.now() + dt.timedelta(seconds=0.25, milliseconds=rng.uniform(-10, 150))
        ApprovalRequest.objects.filter(pk=approval.pk).update(expires_at=deadline)
        path = f"/api/v1/approvals/{approval.pk}/decision/"

        def racer(i: int, path: str = path, fire_at: float = fire_at, version: int = approval.version) -> Any:
            time.sleep(max(0.0, fire_at - time.monotonic()))
            if i < DECIDERS:
                body = ({"decision": "approve"} if i == 0 else {"decision": "reject", "reason": "race"}) | {
                    "expected_version": version}
                return _post(tokens[i], path, body)
            return ("expire", approval_expire_due())

        replies = run_concurrently(DECIDERS + EXPIRERS, racer, timeout=60)
        # A decision refused at the deadline while the passes, a moment earlier, found nothing due yet: the
        # approval is expired in all but the write, which the next pass (every interval) makes. Made here.
        time.sleep(max(0.0, (deadline - timezone.now()).total_seconds()) + 0.01)
        next_pass = approval.pk in approval_expire_due()
        errors = [r for r in replies if isinstance(r, BaseException)]
        decided = [r for r in replies[:DECIDERS] if isinstance(r, tuple) and r[0] == 200]
        refused = [r for r in replies[:DECIDERS] if isinstance(r, tuple) and r[0] != 200]
        expirers_won = sum(1 for r in replies[DECIDERS:] if isinstance(r, tuple) and approval.pk in r[1])
        loser_codes.update(f"{status} {code}" for status, code in refused)
        status, decided_by, decided_at = _rows(
            "SELECT status, decided_by_id, decided_at FROM runs_app_approvalrequest WHERE id = %s", [approval.pk])[0]
        audits = Counter(a for (a,) in _rows(
            "SELECT action FROM harness_auditentry WHERE target_type = 'approvalrequest' AND target_id = %s",
            [str(approval.pk)]))
        events = Counter(k for (k,) in _rows(
            "SELECT kind FROM runs_app_runevent WHERE run_id = %s AND kind LIKE 'approval.%%'", [run.pk]))
        outcomes[f"{status} by the next pass" if next_pass else status] += 1
        expected_events = Counter({"approval.requested": events["approval.requested"], f"approval.{status}": 1})
        ok = (not errors and status in ("approved", "rejected", "expired")
              and len(decided) + expirers_won + int(next_pass) == 1
              and all(s == 409 and code in ("already_decided", "approval_expired") for s, code in refused)
              and +events == +expected_events
              and (audits == Counter({f"approval.{status}": 1}) if status != "expired" else not audits)
              and ((decided_by is not None and decided_at is not None) == (status != "expired")))
        if not ok:
            bad.append({"trial": trial, "status": status, "next_pass": next_pass, "replies": [repr(r) for r in replies],
                        "audits": dict(audits), "events": dict(events)})
    broker_client().flushdb()  # the decisions' resume messages: no worker runs here
    figures = {
        "trials": trials, "deciders": DECIDERS, "expiry_passes": EXPIRERS,
        "outcomes": dict(outcomes), "loser_replies": dict(loser_codes),
        "trials_not_exactly_one_outcome": len(bad), "bad_trials": bad[:5],
        "seconds": _seconds(started),
    }
    passed = not bad and sum(outcomes.values()) == trials
    return Result(number=22, title=TITLE_22, passed=passed, figures=figures, command=command_for(22, quick),
                  notes="Each trial's deadline falls -10 to +150 ms from the moment every racer fires, so trials fall "
                        "on both sides of it; `outcomes` shows how they fell. 'expired by the next pass': the "
                        "decisions came after the deadline and were refused while the racing passes, a moment "
                        "earlier, found nothing due; the next pass expired it (the approval was never decidable). "
                        "A decision that lost to the expiry is told 409 approval_expired, one that lost to the "
                        "other reviewer 409 already_decided.")


# --- 23. a result-hash conflict delivered concurrently -----------------------------------------

TITLE_23 = "Result-hash conflict delivered concurrently: one result consumed, every other answered 409"
DELIVERERS_PER_RESULT = 2


@experiment(23, TITLE_23)
def result_conflict_race(quick: bool) -> Result:
    """Per trial: a running run's dispatched effect; four agents deliver at once through the API, two with
    result A and two with result B. Exactly one reply says `consumed`; the stored result is that one's; the
    other result is recorded as the conflicting hash, the effect is `conflict`, the run `blocked` at
    `effect_conflict`; every other reply is `already_consumed` (the winner's result, before the conflict
    landed) or 409 `effect_conflict`; one `effect.consumed` event, never two."""
    trials = 15 if quick else 200
    started = time.monotonic()
    project = fresh_project("result-race")
    session = factories.make_session(project)
    _, token = factories.make_agent_token(project, name="deliverer")
    replies_seen: Counter[str] = Counter()
    bad: list[dict] = []
    for trial in range(trials):
        run = factories.make_run(project, session=session)
        run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
        key = f"result-race-{uuid.uuid4().hex}"
        effect, _ = effect_intend(project=project, idempotency_key=key, tool="publish_chapter",
                                  arguments={"trial": trial}, run_id=run.pk)
        effect_dispatch(project=project, effect_id=effect.pk)
        results = [{"published": True, "copy": "A", "trial": trial}, {"published": True, "copy": "B", "trial": trial}]

        def deliver(i: int, key: str = key, results: list = results) -> tuple[int, str, int]:
            which = i % 2
            status, code = _post(token, "/api/v1/effects/deliver/", {"idempotency_key": key, "result": results[which]})
            return status, code, which

        replies = run_concurrently(DELIVERERS_PER_RESULT * 2, deliver, timeout=60)
        errors = [r for r in replies if isinstance(r, BaseException)]
        ok_replies = [r for r in replies if not isinstance(r, BaseException)]
        replies_seen.update(f"{s} {c}" for s, c, _ in ok_replies)
        consumed = [r for r in ok_replies if r[:2] == (200, "consumed")]
        row = _rows("SELECT status, result->>'copy', result_hash, conflicting_hash, receipt "
                    "FROM runs_app_externaleffect WHERE id = %s", [effect.pk])[0]
        status, stored_copy, result_hash, conflicting_hash, receipt = row
        run_row = _rows("SELECT status, blocked_step FROM runs_app_run WHERE id = %s", [run.pk])[0]
        events = Counter(k for (k,) in _rows(
            "SELECT kind FROM runs_app_runevent WHERE run_id = %s AND kind LIKE 'effect.%%'", [run.pk]))
        winner = consumed[0][2] if len(consumed) == 1 else None
        ok = (not errors and len(consumed) == 1 and winner is not None
              and stored_copy == results[winner]["copy"]
              and status == "conflict" and conflicting_hash and conflicting_hash != result_hash and receipt
              and run_row == ("blocked", "effect_conflict")
              and events["effect.consumed"] == 1
              and all((s, c) == (409, "effect_conflict") or (s, c, w) == (200, "already_consumed", winner)
                      for s, c, w in ok_replies if (s, c) != (200, "consumed")))
        if not ok:
            bad.append({"trial": trial, "replies": [repr(r) for r in replies], "effect": list(row),
                        "run": list(run_row), "events": dict(events)})
    figures = {
        "trials": trials, "deliverers": DELIVERERS_PER_RESULT * 2, "replies": dict(replies_seen),
        "trials_not_exactly_one_consumed": len(bad), "bad_trials": bad[:5],
        "seconds": _seconds(started),
    }
    return Result(number=23, title=TITLE_23, passed=not bad, figures=figures, command=command_for(23, quick))


# --- 24. supersede racing supersede ------------------------------------------------------------

TITLE_24 = "Supersede racing supersede on one memory record: one new version stands, the rest refused"
SUPERSEDERS = 4


@experiment(24, TITLE_24)
def supersede_race(quick: bool) -> Result:
    """Per trial: an active record; four operators supersede it at once through the API, two with their own
    content and two with the same content. Exactly one 201; every other reply 409 `already_superseded`; with
    SQL: the old record is superseded and points at the one new version, which is active; no other new record
    survived (a loser's insert rolled back); one `memory.superseded` audit entry for the old record."""
    trials = 15 if quick else 200
    started = time.monotonic()
    project = fresh_project("supersede-race")
    run = factories.make_run(project)
    tokens = [_reviewer_token(project, "operator") for _ in range(SUPERSEDERS)]
    agent = Actor.for_agent("supersede-race-agent")
    replies_seen: Counter[str] = Counter()
    bad: list[dict] = []
    for trial in range(trials):
        written = memory_write(project=project.pk, actor=agent, scope="project",
                               content=f"The harbour light of trial {trial} is green.", source_run_id=run.pk).record
        assert written is not None
        tag = uuid.uuid4().hex[:8]
        contents = [f"The harbour light of trial {trial} is red ({tag}, by {i})." for i in range(SUPERSEDERS - 2)]
        contents += [f"The harbour light of trial {trial} is white ({tag})."] * 2
        path = f"/api/v1/memory/records/{written.pk}/supersede/"

        def supersede(i: int, path: str = path, contents: list = contents,
                      version: int = written.version) -> tuple[int, str]:
            # Each operator sends the version it read: the losers still lost a race (already_superseded).
            return _post(tokens[i], path, {"content": contents[i], "expected_version": version, "reason": "race"})

        replies = run_concurrently(SUPERSEDERS, supersede, timeout=60)
        errors = [r for r in replies if isinstance(r, BaseException)]
        ok_replies = [r for r in replies if not isinstance(r, BaseException)]
        replies_seen.update(f"{s} {c}" for s, c in ok_replies)
        created = [i for i, r in enumerate(replies) if not isinstance(r, BaseException) and r[0] == 201]
        old_status, superseded_by = _rows(
            "SELECT status, superseded_by_id FROM memory_app_memoryrecord WHERE id = %s", [written.pk])[0]
        new_rows = _rows("SELECT id, status, content FROM memory_app_memoryrecord WHERE project_id = %s AND "
                         "content LIKE %s", [project.pk, f"%({tag}%"])
        audits = _rows("SELECT data->>'by' FROM harness_auditentry WHERE target_type = 'memoryrecord' AND "
                       "target_id = %s AND action = 'memory.superseded'", [str(written.pk)])
        ok = (not errors and len(created) == 1 and old_status == "superseded" and len(new_rows) == 1
              and new_rows[0][0] == superseded_by and new_rows[0][1] == "active"
              and new_rows[0][2] == contents[created[0]]
              and audits == [(str(superseded_by),)]
              and all((s, c) == (409, "already_superseded") for s, c in ok_replies if s != 201))
        if not ok:
            bad.append({"trial": trial, "replies": [repr(r) for r in replies], "old": [old_status, superseded_by],
                        "new": [list(r) for r in new_rows], "audits": audits})
    figures = {
        "trials": trials, "supersedes_per_trial": SUPERSEDERS, "replies": dict(replies_seen),
        "trials_not_exactly_one_version": len(bad), "bad_trials": bad[:5],
        "seconds": _seconds(started),
    }
    return Result(number=24, title=TITLE_24, passed=not bad, figures=figures, command=command_for(24, quick))

"""The hand-written fast statements, held to the transition tables and the guards (issue 31, part 2).

A decision without an edit is one prepared UPDATE (runs_app.services.approvals._decide_prepared), and the usual
effect delivery one conditional UPDATE with its event (runs_app.services.effects._effect_deliver_fast). Each
restates in SQL what the ORM's path says with the state machine's table (`cas_transition_row`, `sources_of`) and
the service's guards. Here hypothesis draws a decision's states (the approval's status, the version given or not
and which, the asker being the decider, expiry, fingerprint, the project frozen, the reviewer's role, the caller's
scope), and every state of a delivery is taken once (the effect's status, the hash it holds, consume or not,
settles_unknown); each state is decided three ways:

1. the fast statement, alone;
2. the ORM's path, alone (`_decide_orm`; for an effect, `effect_deliver` with the fast statement off);
3. a plain Python statement of the guards, from the table's data (`APPROVAL_MACHINE.sources_of`,
   `EFFECT_MACHINE.can`) and the service's documented rules.

They must agree on whether the row moves and, when it does, on what it holds; and the whole service call answers
the same with and without the fast statement (a refusal's code included). A guard added to one of them and not the
others fails here. Each state runs in a savepoint rolled back after it, on one set of rows.
"""

import datetime as dt
import itertools
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.actors import Actor
from harness.canonical import digest
from harness.http.errors import DomainError
from harness.models import Membership, Project
from harness.tenancy import Role, acting_filter, decision_scope
from runs_app.machines import APPROVAL_MACHINE, EFFECT_MACHINE
from runs_app.models import (
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalStatus,
    ApprovalVote,
    EffectStatus,
    ExternalEffect,
    ReviewerGroup,
    Run,
    RunEvent,
)
from runs_app.policies import may_decide
from runs_app.services import approval_decide, approval_request_create, approvals, effects, run_transition
from runs_app.services.effects import effect_deliver, effect_intend
from tests import factories

pytestmark = pytest.mark.django_db

# Reproducible in CI (the same states every run), many per run; no example database on disk.
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


class _Rollback(Exception):
    """Ends a state's savepoint, carrying what was read inside it."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def _in_savepoint(body: Any) -> Any:
    """`body()`'s answer (or the DomainError it raised, as its type and code), with everything it wrote undone."""
    try:
        with transaction.atomic():
            try:
                value = body()
            except DomainError as exc:
                value = ("refused", type(exc).__name__, exc.code)
            raise _Rollback(value)
    except _Rollback as done:
        return done.value


# --- approvals ---------------------------------------------------------------------------------------------


@dataclass
class Approvals:
    project: Project
    other: Project
    approval_id: int
    users: dict[str, User]
    groups: dict[str, ReviewerGroup]
    policies: dict[str, ApprovalPolicy]


@pytest.fixture
def approval_rows(monkeypatch: pytest.MonkeyPatch) -> Approvals:
    from worker import tasks

    monkeypatch.setattr(tasks, "enqueue_resume", lambda run_id: None)
    project, other = factories.make_project("fast-p"), factories.make_project("fast-o")
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to="running", expected_version=run.version)
    approval = approval_request_create(project=project, run_id=run.pk, tool="publish", arguments={"ch": 3},
                                       idempotency_key="fast-key", actor=Actor.for_agent("agent"))
    member, outsider = factories.make_user("fast-member"), factories.make_user("fast-outsider")
    Membership.objects.create(user=member, project=project, roles=[Role.REVIEWER])
    Membership.objects.create(user=outsider, project=project, roles=[])  # a reviewer, but only elsewhere
    Membership.objects.create(user=outsider, project=other, roles=[Role.REVIEWER])
    voter = factories.make_user("fast-voter", role=Role.REVIEWER, projects=[project])
    users = {"global": factories.make_user("fast-global", role=Role.REVIEWER, projects=[project, other]),
             "member": member, "outsider": outsider, "voter": voter}
    # Eligibility (runs_app.policies): a group the decider is put in for the state, and one it is never in.
    groups = {name: ReviewerGroup.objects.create(project=project, name=name) for name in ("mine", "theirs")}
    groups["theirs"].members.set([voter])  # a group with members, none of them the decider
    policies = {"open": ApprovalPolicy.objects.create(project=project, tool="publish", version=1)}
    for name in ("mine", "theirs"):
        policies[name] = ApprovalPolicy.objects.create(project=project, tool="publish", version=len(policies) + 1)
        policies[name].eligible_groups.set([groups[name]])
    return Approvals(project, other, approval.pk, users, groups, policies)


# Each dimension of a decision's state: the values that let it through, and those that stop it.
_APPROVAL_GUARDS: dict[str, tuple[list[Any], list[Any]]] = {
    "expected": (["none", "current"], ["stale"]),  # the version the reviewer was shown
    "own": ([False], [True]),  # the decider asked for it
    "expiry": (["none", "future"], ["past"]),
    "fingerprint": (["none", "shown"], ["changed"]),
    "frozen": ([False], [True]),
    "who": (["global", "member"], ["outsider"]),  # the reviewer role: everywhere, in the project, or elsewhere only
    "scope": (["project", "ids"], ["other_ids"]),  # the caller's project, or the API's project_ids
    # Who the policy lets decide: no policy, one naming no groups, the decider's group, or escalated to it; or
    # another group only, or escalated away from the decider's.
    "eligible": (["no_policy", "open", "in_group", "routed_to_me"], ["not_in_group", "routed_elsewhere"]),
    # The quorum (an approval's only): one approval, or two with another reviewer's vote for the action; two with
    # no vote, another's vote for another action, or only the decider's own earlier vote.
    "quorum": (["one", "met"], ["short", "other_action", "own_vote"]),
}
# (policy, routed group) of each eligibility.
_ELIGIBLE = {"no_policy": (None, None), "open": ("open", None), "in_group": ("mine", None),
             "routed_to_me": ("theirs", "mine"), "not_in_group": ("theirs", None),
             "routed_elsewhere": ("mine", "theirs")}


@st.composite
def approval_states(draw: Any) -> dict[str, Any]:
    """A decision's state. Most break at most one guard, so that each guard alone decides some states (a mix of
    independent values would rarely pass all but one); the others are any mix."""
    to = draw(st.sampled_from([ApprovalStatus.APPROVED, ApprovalStatus.REJECTED]))
    sources = sorted(APPROVAL_MACHINE.sources_of(to))
    dimensions = {"status": (sources, sorted(APPROVAL_MACHINE.states - set(sources))), **_APPROVAL_GUARDS}
    broken = draw(st.sampled_from([None, *dimensions, "any"]))
    state: dict[str, Any] = {"to": to, "version": draw(st.integers(1, 3))}
    for name, (through, stops) in dimensions.items():
        values = through + stops if broken == "any" else stops if name == broken else through
        state[name] = draw(st.sampled_from(values))
    return state


def _approval_moves(state: dict[str, Any]) -> bool:
    """The guards, stated from the table's data and approval_decide's documented rules."""
    return _guards_but_quorum_hold(state) and (state["to"] != ApprovalStatus.APPROVED
                                               or state["quorum"] in ("one", "met"))


def _guards_but_quorum_hold(state: dict[str, Any]) -> bool:
    return (state["eligible"] in ("no_policy", "open", "in_group", "routed_to_me")
            and state["status"] in APPROVAL_MACHINE.sources_of(state["to"])
            and state["expected"] != "stale" and not state["own"] and state["expiry"] != "past"
            and state["fingerprint"] != "changed" and not state["frozen"] and state["who"] != "outsider"
            and state["scope"] != "other_ids")


def _set_approval(rows: Approvals, state: dict[str, Any], actor: Actor) -> ApprovalRequest:
    now = timezone.now()
    decided = state["status"] in (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED)
    ApprovalRequest.objects.filter(pk=rows.approval_id).update(
        status=state["status"], version=state["version"],
        requested_by=actor.label if state["own"] else "agent:agent",
        expires_at={"none": None, "past": now - dt.timedelta(hours=1),
                    "future": now + dt.timedelta(hours=1)}[state["expiry"]],
        decided_by=rows.users["global"] if decided else None, decided_at=now if decided else None,
        decision_reason="earlier" if decided else "",
        approved_fingerprint="f" * 64 if state["status"] == ApprovalStatus.APPROVED else "")
    Project.objects.filter(pk=rows.project.pk).update(frozen_at=now if state["frozen"] else None)
    policy, routed = _ELIGIBLE[state["eligible"]]
    rows.groups["mine"].members.set([actor.user])
    ApprovalRequest.objects.filter(pk=rows.approval_id).update(
        policy=rows.policies[policy] if policy else None, routed_group=rows.groups[routed] if routed else None,
        approvals_required=1 if state["quorum"] == "one" else 2)
    approval = ApprovalRequest.objects.get(pk=rows.approval_id)
    ApprovalVote.objects.filter(approval=approval).delete()
    voter, fingerprint = {"one": (None, ""), "short": (None, ""), "met": ("voter", approval.action_fingerprint),
                          "other_action": ("voter", "e" * 64), "own_vote": ("self", approval.action_fingerprint),
                          }[state["quorum"]]
    if voter:
        ApprovalVote.objects.create(approval=approval, fingerprint=fingerprint,
                                    user=actor.user if voter == "self" else rows.users["voter"])
    return approval


def _decision_call(rows: Approvals, state: dict[str, Any], approval: ApprovalRequest) -> dict[str, Any]:
    call: dict[str, Any] = {
        "expected_version": {"none": None, "current": approval.version, "stale": approval.version + 1}[
            state["expected"]],
        "expected_fingerprint": {"none": None, "shown": approval.action_fingerprint, "changed": "0" * 64}[
            state["fingerprint"]],
    }
    if state["scope"] == "project":
        call["project"] = rows.project.pk
    else:
        call["project_ids"] = [rows.other.pk] + ([rows.project.pk] if state["scope"] == "ids" else [])
    return call


def _written(row: ApprovalRequest | None) -> tuple[Any, ...] | None:
    if row is None:
        return None
    return (row.status, row.version, row.decided_by_id, row.decision_reason, row.approved_fingerprint,
            row.approved_arguments)


@SETTINGS
@given(state=approval_states())
def test_the_prepared_decision_moves_exactly_the_rows_the_table_and_the_guards_move(
        approval_rows: Approvals, state: dict[str, Any]) -> None:
    rows = approval_rows
    user = rows.users[state["who"]]
    actor = Actor.for_user(user)
    to, now, reason = state["to"], timezone.now(), "because"

    def prepared() -> tuple[Any, ...] | None:
        approval = _set_approval(rows, state, actor)
        call = _decision_call(rows, state, approval)
        project_ids = call.get("project_ids") or [call["project"]]
        return _written(approvals._decide_prepared(
            approval_id=rows.approval_id, to=to, user=user, actor=actor, now=now, reason=reason,
            project_ids=project_ids, expected_version=call["expected_version"],
            expected_fingerprint=call["expected_fingerprint"]))

    def orm() -> tuple[Any, ...] | None:
        approval = _set_approval(rows, state, actor)
        call = _decision_call(rows, state, approval)
        _, visible = decision_scope(ApprovalRequest.objects.all(), actor_user=user, role=Role.REVIEWER,
                                    project=call.get("project"), project_ids=call.get("project_ids"),
                                    missing="missing", refused="refused", code="not_a_reviewer")
        try:
            return _written(approvals._decide_orm(
                visible.filter(acting_filter(user, Role.REVIEWER)).filter(may_decide(user)),
                approval_id=rows.approval_id, to=to, actor=actor, user=user, now=now,
                updates=approvals.decision_updates(user, now, reason, to),
                expected_version=call["expected_version"], expected_fingerprint=call["expected_fingerprint"]))
        except DomainError:  # the table's write matched nothing
            return None

    fast, table = _in_savepoint(prepared), _in_savepoint(orm)
    assert fast == table, state
    assert (fast is not None) == _approval_moves(state), state


def _decided(rows: Approvals, state: dict[str, Any], actor: Actor) -> Any:
    approval = _set_approval(rows, state, actor)
    decided = approval_decide(approval_id=rows.approval_id, actor=actor,
                              decision="approve" if state["to"] == ApprovalStatus.APPROVED else "reject",
                              reason="because", **_decision_call(rows, state, approval))
    return _written(decided)


@SETTINGS
@given(state=approval_states())
def test_a_decision_answers_the_same_with_and_without_the_prepared_statement(
        approval_rows: Approvals, state: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    actor = Actor.for_user(approval_rows.users[state["who"]])
    with_fast = _in_savepoint(lambda: _decided(approval_rows, state, actor))
    with monkeypatch.context() as m:
        m.setattr(approvals, "_decide_prepared", lambda **kw: None)
        without = _in_savepoint(lambda: _decided(approval_rows, state, actor))
    assert with_fast == without, state
    assert (with_fast[0] == state["to"]) == _approval_moves(state), (state, with_fast)
    # Every guard but the quorum holds: the approval is a vote, the request still pending at its next version.
    vote = (state["to"] == ApprovalStatus.APPROVED and state["quorum"] in ("short", "other_action")
            and _guards_but_quorum_hold(state))
    assert (with_fast[0] == ApprovalStatus.PENDING) == vote, (state, with_fast)


# --- effects -------------------------------------------------------------------------------------------------

RESULT = {"answer": 42}
COMPUTED = digest(RESULT)


@dataclass
class Effects:
    project: Project
    run_id: int
    effect_id: int
    key: str


@pytest.fixture
def effect_rows() -> Effects:
    project = factories.make_project("fast-e")
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to="running", expected_version=run.version)
    effect, _ = effect_intend(project=project, idempotency_key="fast-effect", tool="publish", arguments={"ch": 3},
                              run_id=run.pk)
    return Effects(project, run.pk, effect.pk, "fast-effect")


_HOLDS_A_HASH = {EffectStatus.DELIVERED, EffectStatus.CONSUMED, EffectStatus.CONFLICT}  # the table's constraint
# Every state of a delivery that matters to it, each once: the effect's status, the hash it holds against the one
# delivered (none; the same; another), consume or not, the resume worker settling an unknown one or not.
EFFECT_STATES = [
    {"status": status, "stored": stored, "consume": consume, "settles_unknown": settles, "version": 2}
    for status, stored, consume, settles in itertools.product(
        sorted(EFFECT_MACHINE.states), ["empty", "same", "other"], [False, True], [False, True])
    if stored != "empty" or status not in _HOLDS_A_HASH
]


def _effect_fast_moves(state: dict[str, Any]) -> bool:
    """The fast statement's cases, from the table: a delivery (without consuming) of an effect the table moves to
    `delivered` in one edge and that holds no result yet, an unknown one only by the resume worker's settling
    (effect_deliver: anyone else is `not_a_person`); a consumption of a delivered one with the result it holds."""
    if state["consume"]:
        return EFFECT_MACHINE.can(state["status"], EffectStatus.CONSUMED) and state["stored"] == "same"
    return (EFFECT_MACHINE.can(state["status"], EffectStatus.DELIVERED) and state["stored"] == "empty"
            and (state["status"] != EffectStatus.UNKNOWN or state["settles_unknown"]))


def _set_effect(rows: Effects, state: dict[str, Any]) -> None:
    ExternalEffect.objects.filter(pk=rows.effect_id).update(
        status=state["status"], version=state["version"],
        result_hash={"empty": "", "same": COMPUTED, "other": "e" * 64}[state["stored"]],
        answer={"status": 422} if state["status"] == EffectStatus.REFUSED else None)
    Run.objects.filter(pk=rows.run_id).update(status="running")


def _effect_after(rows: Effects, delivery: Any, events_before: int) -> tuple[Any, ...]:
    effect = ExternalEffect.objects.get(pk=rows.effect_id)
    events = [(e.kind, e.data.get("key"), e.data.get("result_hash"), bool(e.data.get("receipt")))
              for e in RunEvent.objects.filter(run_id=rows.run_id).order_by("seq")[events_before:]]
    return (delivery.outcome if delivery is not None else None, effect.status, effect.version, effect.result_hash,
            bool(effect.receipt), effect.result, events, Run.objects.get(pk=rows.run_id).status)


def _delivered(rows: Effects, state: dict[str, Any], *, fast_only: bool = False) -> Any:
    _set_effect(rows, state)
    before = RunEvent.objects.filter(run_id=rows.run_id).count()
    if fast_only:
        delivery = effects._effect_deliver_fast(rows.project.pk, rows.key, RESULT, COMPUTED,
                                                consume=state["consume"], run_id=None, events=[],
                                                settles_unknown=state["settles_unknown"])
    else:
        delivery = effect_deliver(project=rows.project.pk, idempotency_key=rows.key, result=RESULT,
                                  consume=state["consume"], settles_unknown=state["settles_unknown"])
    return _effect_after(rows, delivery, before)


def test_the_fast_delivery_moves_exactly_what_the_table_path_moves(
        effect_rows: Effects, monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(EFFECT_STATES) == 84  # 8 statuses x 3 hashes x 2 x 2, less the hashless delivered ones the table refuses
    for state in EFFECT_STATES:
        fast = _in_savepoint(lambda: _delivered(effect_rows, state, fast_only=True))  # noqa: B023 - called at once
        served = _in_savepoint(lambda: _delivered(effect_rows, state))  # noqa: B023
        with monkeypatch.context() as m:
            m.setattr(effects, "_effect_deliver_fast", lambda *a, **kw: None)
            table = _in_savepoint(lambda: _delivered(effect_rows, state))  # noqa: B023
        assert served == table, state  # the service answers the same with and without the fast statement
        assert (fast[0] is not None) == _effect_fast_moves(state), (state, fast)
        if fast[0] is not None:  # and where the fast statement moves the row, it writes what the table's path writes
            assert fast == table, state

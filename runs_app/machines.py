"""The transition tables of runs, tasks, approvals, external effects and handoffs, with their guards, declared once.

Every door (API, console, admin, worker) moves a row through `harness.transitions.cas_transition` with
one of these. A guarded edge is open only to the actor its guard names: for anyone else its source is
not among the UPDATE's legal sources, so the refusal needs no read of the row before the write and no
`if` in a service (DESIGN.md, "State machines"; tests/harness/test_machines_match_design.py pins them).
"""

from harness.actors import ActorKind
from harness.transitions import Guard, StateMachine
from runs_app.models import ApprovalStatus, EffectStatus, HandoffStatus, RunStatus, TaskStatus

R = RunStatus
RUN_MACHINE = StateMachine.declare(
    "run",
    R.CREATED,
    {
        R.CREATED: {R.RUNNING, R.CANCELLED},
        R.RUNNING: {R.WAITING_APPROVAL, R.WAITING_EXTERNAL, R.SUCCEEDED, R.FAILED, R.CANCELLED, R.BLOCKED},
        R.WAITING_APPROVAL: {R.RUNNING, R.FAILED, R.CANCELLED, R.BLOCKED},
        R.WAITING_EXTERNAL: {R.RUNNING, R.FAILED, R.CANCELLED, R.BLOCKED},
        R.BLOCKED: {R.RUNNING, R.FAILED, R.CANCELLED},
        R.SUCCEEDED: set(),
        R.FAILED: set(),
        R.CANCELLED: set(),
    },
    guards={
        # A waiting run continues only after the resume worker has re-validated everything
        # (DESIGN.md, "Resume"); the API, the console and the admin cannot push it past its approval.
        (R.WAITING_APPROVAL, R.RUNNING): Guard(
            only=ActorKind.WORKER, code="worker_only_transition",
            detail="A run waiting for approval continues only through the resume worker.",
        ),
    },
)

def run_acting_statuses(actor: str | None) -> frozenset[str]:
    """The statuses in which a run may declare an action (an effect's intent), read off RUN_MACHINE.

    A run acts where it may finish: the sources of `succeeded` (running). Blocked (at its budget, say), waiting,
    not started or finished, it does not. The resume worker (`actor` "worker") also acts for a run it holds the
    lease of while it resumes it, waiting or blocked (a retry in place), so for it every status but the terminal.
    """
    if actor == ActorKind.WORKER:
        return RUN_MACHINE.states - RUN_MACHINE.terminal
    return RUN_MACHINE.sources_of(R.SUCCEEDED, actor)


T = TaskStatus
TASK_MACHINE = StateMachine.declare(
    "task",
    T.OPEN,
    {
        T.OPEN: {T.ACTIVE, T.ABANDONED},
        T.ACTIVE: {T.WAITING, T.COMPLETED, T.FAILED, T.ABANDONED},
        T.WAITING: {T.ACTIVE, T.FAILED, T.ABANDONED},
        T.COMPLETED: set(),
        T.FAILED: set(),
        T.ABANDONED: set(),
    },
)

A = ApprovalStatus
APPROVAL_MACHINE = StateMachine.declare(
    "approval",
    A.PENDING,
    {A.PENDING: {A.APPROVED, A.REJECTED, A.EXPIRED, A.CANCELLED}, A.APPROVED: set(), A.REJECTED: set(),
     A.EXPIRED: set(), A.CANCELLED: set()},
)

E = EffectStatus
EFFECT_MACHINE = StateMachine.declare(
    "effect",
    E.INTENDED,
    {
        E.INTENDED: {E.DISPATCHED},
        # The tool answers (delivered), definitely says no (refused, a 4xx), or nobody knows: a crash or a
        # lost reply leaves the outcome unknown.
        E.DISPATCHED: {E.DELIVERED, E.REFUSED, E.UNKNOWN},
        # "If you cannot prove whether a side effect happened, stop" (seed 002, section 12): an unknown effect
        # is dispatched again under its key only when its adapter honours keys or a person allowed it, its
        # result is bound when the adapter's lookup by key or a person (with the evidence) says it happened,
        # and a person may abandon it (worker.steps.bind_result, runs_app.services.effects.effect_resolve).
        E.UNKNOWN: {E.DISPATCHED, E.DELIVERED, E.ABANDONED},
        E.DELIVERED: {E.CONSUMED, E.CONFLICT},
        E.CONSUMED: {E.CONFLICT},
        E.CONFLICT: set(),
        E.REFUSED: set(),
        E.ABANDONED: set(),
    },
)

H = HandoffStatus
HANDOFF_MACHINE = StateMachine.declare(
    "handoff",
    H.ISSUED,
    {
        H.ISSUED: {H.ACCEPTED, H.EXPIRED, H.CANCELLED},
        H.ACCEPTED: {H.RETURNED, H.EXPIRED, H.CANCELLED},
        # A returned result waits for its origin run's resume; nothing else may end it (DESIGN.md, "Handoff").
        H.RETURNED: {H.CONSUMED},
        H.CONSUMED: set(),
        H.EXPIRED: set(),
        H.CANCELLED: set(),
    },
    guards={
        # Consumed once, into the origin run, by the resume that binds it (the same receipt as an effect's).
        (H.RETURNED, H.CONSUMED): Guard(
            only=ActorKind.WORKER, code="worker_only_transition",
            detail="A returned result is consumed only by the resume worker, into its origin run.",
        ),
    },
)

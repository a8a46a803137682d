"""The resume steps (DESIGN.md "Resume"), in order: the one list the pipeline runs, each with its module.

What the steps are (their names, order and the console's labels: runs_app.resume.ResumeStep) is the run's
contract, declared below the worker so the console reads it without loading the worker; this list says how the
worker carries each out: its phase and the module that does it, imported by name so a reader (and a tool) can
follow every step from here.

A step is a module in worker/steps/ with `run(r: Resume) -> dict | None`: it returns its trace data, or raises
StepFailed (the run is blocked naming the step), Stop or Retry (worker.state). The step making the approved call
defines `dispatch`, `call` and `deliver` instead. A new step is a ResumeStep member, one module and one line here.
"""

from dataclasses import dataclass
from enum import StrEnum
from types import ModuleType

from django.core.exceptions import ImproperlyConfigured

from runs_app.resume import ResumeStep
from worker.steps import (
    approval_preconditions,
    argument_schema,
    artifact_fingerprints,
    authority_lease,
    bind_result,
    capability,
    checkpoint,
    compatibility,
    continue_from_cursor,
    load,
    not_yet_consumed,
    sparse_context,
)


class Phase(StrEnum):
    """The resume's transactions, in order (worker.pipeline)."""

    PRE_CALL = "pre_call"  # one transaction, up to the approved action's dispatch (committed before the call)
    CALL = "call"  # the approved action: `dispatch` ends the pre-call transaction, `call` runs outside any, `deliver`
    BINDING = "binding"  # one transaction: consume the result, move the run on, checkpoint


PRE_CALL, CALL, BINDING = Phase.PRE_CALL, Phase.CALL, Phase.BINDING


@dataclass(frozen=True)
class Step:
    name: ResumeStep  # the trace event is `resume.<name>`; a blocked run names it in `blocked_step`
    phase: Phase
    module: ModuleType

    @property
    def label(self) -> str:
        """What the console's checklist says (runs_app.resume.ResumeStep)."""
        return str(self.name.label)


STEPS = (
    Step(ResumeStep.LOAD, PRE_CALL, load),
    Step(ResumeStep.COMPATIBILITY, PRE_CALL, compatibility),
    Step(ResumeStep.AUTHORITY_LEASE, PRE_CALL, authority_lease),
    Step(ResumeStep.SPARSE_CONTEXT, PRE_CALL, sparse_context),
    Step(ResumeStep.ARTIFACT_FINGERPRINTS, PRE_CALL, artifact_fingerprints),
    Step(ResumeStep.APPROVAL_PRECONDITIONS, PRE_CALL, approval_preconditions),
    Step(ResumeStep.ARGUMENT_SCHEMA, PRE_CALL, argument_schema),
    Step(ResumeStep.CAPABILITY, PRE_CALL, capability),
    Step(ResumeStep.BIND_RESULT, CALL, bind_result),
    Step(ResumeStep.NOT_YET_CONSUMED, BINDING, not_yet_consumed),
    Step(ResumeStep.CONTINUE, BINDING, continue_from_cursor),  # `continue` is a keyword: not a module's name
    Step(ResumeStep.CHECKPOINT, BINDING, checkpoint),
)
STEP_NAMES = tuple(str(step.name) for step in STEPS)
PHASES = tuple(Phase)


def check_steps(steps: tuple[Step, ...]) -> None:
    """The pipeline's assumptions about the list: the contract's steps, each once and in its order; phases in order;
    one step making the approved call."""
    names = [step.name for step in steps]
    if len(set(names)) != len(names):
        raise ImproperlyConfigured("worker.registry.STEPS: a step name appears twice")
    if names != list(ResumeStep):
        raise ImproperlyConfigured("worker.registry.STEPS: the steps are not runs_app.resume.ResumeStep's, "
                                   "each once in its order")
    phases = [step.phase for step in steps]
    if phases != sorted(phases, key=PHASES.index):
        raise ImproperlyConfigured("worker.registry.STEPS: the steps' phases are out of order")
    if phases.count(CALL) != 1:
        raise ImproperlyConfigured("worker.registry.STEPS: exactly one step makes the approved call")


# What each phase's step must define (the pipeline calls these: worker.pipeline).
ENTRY_POINTS = {PRE_CALL: ("run",), BINDING: ("run",), CALL: ("dispatch", "call", "deliver")}


def check_modules(steps: tuple[Step, ...]) -> None:
    """Each step's module defines what the pipeline calls of its phase."""
    for step in steps:
        missing = [name for name in ENTRY_POINTS[step.phase] if not callable(getattr(step.module, name, None))]
        if missing:
            raise ImproperlyConfigured(f"worker.registry.STEPS: step {str(step.name)!r} ({step.module.__name__}) "
                                       f"defines no {', '.join(missing)}")


check_steps(STEPS)
check_modules(STEPS)

"""The resume steps (DESIGN.md "Resume"), in order: the one list the pipeline runs, the trace's
event names (`resume.<name>`) and the console's checklist derive from.

A step is a module in worker/steps/ with `run(r: Resume) -> dict | None`: it returns its trace
data, or raises StepFailed (the run is blocked naming the step), Stop or Retry (worker.state).
A new step is one new module and one line here. This module imports no step, so the console can
read the names and labels without loading the worker.
"""

from dataclasses import dataclass
from importlib import import_module
from types import ModuleType

from django.core.exceptions import ImproperlyConfigured

PRE_CALL = "pre_call"  # one transaction, up to the approved action's dispatch (committed before the call)
CALL = "call"  # the approved action: `dispatch` ends the pre-call transaction, `call` runs outside any, `deliver`
BINDING = "binding"  # one transaction: consume the result, move the run on, checkpoint


@dataclass(frozen=True)
class Step:
    name: str  # the trace event is `resume.<name>`; a blocked run names it in `blocked_step`
    phase: str
    label: str  # what the console's checklist says
    module: str = ""  # worker.steps.<module>, when the name is not a module name

    def load(self) -> ModuleType:
        return import_module(f"worker.steps.{self.module or self.name}")


STEPS = (
    Step("load", PRE_CALL, "Load the durable run and its latest checkpoint"),
    Step("compatibility", PRE_CALL, "Check the schema and version are compatible"),
    Step("authority_lease", PRE_CALL, "Check authority and take the lease (one owner)"),
    Step("sparse_context", PRE_CALL, "Rebuild a sparse context snapshot (recorded)"),
    Step("artifact_fingerprints", PRE_CALL, "Verify the artifact fingerprints"),
    Step("approval_preconditions", PRE_CALL, "Verify the approved fingerprint is the pending action's"),
    Step("capability", PRE_CALL, "Re-resolve the tool adapter for the pending work"),
    Step("bind_result", CALL, "Execute the approved action once, or bind its returned result"),
    Step("not_yet_consumed", BINDING, "Verify the effect was not consumed already"),
    Step("continue", BINDING, "Continue from the saved cursor", module="continue_from_cursor"),
    Step("checkpoint", BINDING, "Checkpoint again"),
)
STEP_NAMES = tuple(step.name for step in STEPS)
PHASES = (PRE_CALL, CALL, BINDING)


def check_steps(steps: tuple[Step, ...]) -> None:
    """The pipeline's assumptions about the list: phases in order, one step making the approved call, each
    name once."""
    names = [step.name for step in steps]
    if len(set(names)) != len(names):
        raise ImproperlyConfigured("worker.registry.STEPS: a step name appears twice")
    phases = [step.phase for step in steps]
    if phases != sorted(phases, key=PHASES.index):
        raise ImproperlyConfigured("worker.registry.STEPS: the steps' phases are out of order")
    if phases.count(CALL) != 1:
        raise ImproperlyConfigured("worker.registry.STEPS: exactly one step makes the approved call")


# What each phase's step must define (the pipeline calls these: worker.pipeline).
ENTRY_POINTS = {PRE_CALL: ("run",), BINDING: ("run",), CALL: ("dispatch", "call", "deliver")}


def check_modules(steps: tuple[Step, ...]) -> None:
    """Each step's module exists and defines what the pipeline calls of its phase. Run by worker.pipeline at its
    import (it loads the modules anyway); not here, so the console reads the labels without loading a step."""
    for step in steps:
        try:
            module = step.load()
        except ImportError as exc:
            raise ImproperlyConfigured(f"worker.registry.STEPS: step {step.name!r} has no module: {exc}") from None
        missing = [name for name in ENTRY_POINTS[step.phase] if not callable(getattr(module, name, None))]
        if missing:
            raise ImproperlyConfigured(f"worker.registry.STEPS: step {step.name!r} ({module.__name__}) defines no "
                                       f"{', '.join(missing)}")


check_steps(STEPS)

"""worker.registry: the shipped step list, and the checks that refuse a list the pipeline could not run (at the
registry's import: the list's shape against runs_app.resume.ResumeStep, and each step's module's entry points)."""

import dataclasses

import pytest
from django.core.exceptions import ImproperlyConfigured

from runs_app.resume import RESUME_CHECKS, ResumeStep
from worker.registry import BINDING, CALL, PRE_CALL, STEPS, check_modules, check_steps
from worker.steps import checkpoint


def test_the_shipped_steps_are_the_twelve_checks_in_their_phases():
    assert [(step.name, step.phase) for step in STEPS] == [
        ("load", PRE_CALL), ("compatibility", PRE_CALL), ("authority_lease", PRE_CALL), ("sparse_context", PRE_CALL),
        ("artifact_fingerprints", PRE_CALL), ("approval_preconditions", PRE_CALL),
        ("argument_schema", PRE_CALL), ("capability", PRE_CALL),
        ("bind_result", CALL), ("not_yet_consumed", BINDING), ("continue", BINDING), ("checkpoint", BINDING),
    ]
    assert all(step.label for step in STEPS)
    check_steps(STEPS)
    check_modules(STEPS)  # every module defines what the pipeline calls


def test_the_console_checklist_is_the_workers_list():
    assert [(step.name, step.label) for step in STEPS] == list(RESUME_CHECKS)


def test_a_step_the_contract_does_not_declare_or_a_missing_one_is_refused():
    stranger = dataclasses.replace(STEPS[3], name="no_such_step")
    with pytest.raises(ImproperlyConfigured, match="ResumeStep"):
        check_steps((*STEPS[:3], stranger, *STEPS[3:]))
    without_capability = tuple(step for step in STEPS if step.name != ResumeStep.CAPABILITY)
    with pytest.raises(ImproperlyConfigured, match="ResumeStep"):
        check_steps(without_capability)
    swapped = (STEPS[1], STEPS[0], *STEPS[2:])
    with pytest.raises(ImproperlyConfigured, match="ResumeStep"):
        check_steps(swapped)


def test_a_step_whose_module_lacks_its_phase_entry_points_is_refused():
    # `checkpoint` defines `run` only: as the step making the call it lacks dispatch, call and deliver.
    calls_from_checkpoint = tuple(dataclasses.replace(step, module=checkpoint) if step.phase == CALL else step
                                  for step in STEPS)
    with pytest.raises(ImproperlyConfigured, match="defines no dispatch, call, deliver"):
        check_modules(calls_from_checkpoint)


def test_a_name_twice_is_refused():
    with pytest.raises(ImproperlyConfigured, match="twice"):
        check_steps((STEPS[0], *STEPS))


def test_phases_out_of_order_are_refused():
    binding_first = (dataclasses.replace(STEPS[0], phase=BINDING), *STEPS[1:])
    with pytest.raises(ImproperlyConfigured, match="out of order"):
        check_steps(binding_first)


def test_exactly_one_step_makes_the_call():
    no_call = tuple(dataclasses.replace(step, phase=PRE_CALL) if step.phase == CALL else step for step in STEPS)
    with pytest.raises(ImproperlyConfigured, match="exactly one step"):
        check_steps(no_call)
    first_binding = next(i for i, step in enumerate(STEPS) if step.phase == BINDING)
    two_calls = tuple(dataclasses.replace(step, phase=CALL) if i == first_binding else step
                      for i, step in enumerate(STEPS))  # still in phase order
    with pytest.raises(ImproperlyConfigured, match="exactly one step"):
        check_steps(two_calls)

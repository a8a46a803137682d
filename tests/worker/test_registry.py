"""worker.registry: the shipped step list, and the checks that refuse a list the pipeline could not run (at the
registry's import for the list's shape, at the pipeline's import for the steps' modules)."""

import dataclasses

import pytest
from django.core.exceptions import ImproperlyConfigured

from worker.registry import BINDING, CALL, PRE_CALL, STEPS, Step, check_modules, check_steps


def test_the_shipped_steps_are_the_eleven_checks_in_their_phases():
    assert [(step.name, step.phase) for step in STEPS] == [
        ("load", PRE_CALL), ("compatibility", PRE_CALL), ("authority_lease", PRE_CALL), ("sparse_context", PRE_CALL),
        ("artifact_fingerprints", PRE_CALL), ("approval_preconditions", PRE_CALL), ("capability", PRE_CALL),
        ("bind_result", CALL), ("not_yet_consumed", BINDING), ("continue", BINDING), ("checkpoint", BINDING),
    ]
    assert all(step.label for step in STEPS)
    check_steps(STEPS)
    check_modules(STEPS)  # every module exists and defines what the pipeline calls


def test_a_step_without_a_module_is_refused():
    broken = (*STEPS[:3], Step("no_such_step", PRE_CALL, "Nothing"), *STEPS[3:])
    check_steps(broken)  # its shape is fine
    with pytest.raises(ImproperlyConfigured, match="no_such_step"):
        check_modules(broken)


def test_a_step_whose_module_lacks_its_phase_entry_points_is_refused():
    # `checkpoint` defines `run` only: as the step making the call it lacks dispatch, call and deliver.
    calls_from_checkpoint = tuple(dataclasses.replace(step, module="checkpoint") if step.phase == CALL else step
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

"""worker.registry refuses, at import, a step list the pipeline could not run."""

import dataclasses

import pytest
from django.core.exceptions import ImproperlyConfigured

from worker.registry import BINDING, CALL, PRE_CALL, STEPS, check_steps


def test_the_shipped_steps_pass():
    check_steps(STEPS)


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

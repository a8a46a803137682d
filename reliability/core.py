"""The experiment registry shared by reliability/faults.py and reliability/security.py.

An experiment is a function `fn(quick: bool) -> Result` registered with `@experiment(number, title)`.
`quick=True` is the bounded CI form (run inside pytest-django); `quick=False` the full counts from
issue 7 (run by bin/reliability against its own database).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

ExperimentFn = Callable[[bool], "Result"]
F = TypeVar("F", bound=Callable[..., "Result"])


@dataclass
class Result:
    number: int
    title: str
    passed: bool
    figures: dict = field(default_factory=dict)
    command: str = ""
    notes: str = ""


@dataclass(frozen=True)
class Experiment:
    number: int
    title: str
    fn: ExperimentFn

    def __call__(self, quick: bool) -> Result:
        return self.fn(quick)


REGISTRY: dict[int, Experiment] = {}


def experiment(number: int, title: str) -> Callable[[F], F]:
    """Register `fn(quick) -> Result` as experiment `number`; the function itself is returned unchanged."""

    def register(fn: F) -> F:
        if number in REGISTRY and REGISTRY[number].fn.__qualname__ != fn.__qualname__:
            raise ValueError(f"experiment {number} is registered twice")
        REGISTRY[number] = Experiment(number=number, title=title, fn=fn)
        return fn

    return register


def command_for(number: int, quick: bool = False) -> str:
    """The shell command that reproduces one experiment's figures."""
    return f"bin/reliability --only {number}" + (" --quick" if quick else "")

"""What both adapters' usage reporters share (harness_client.agents.HarnessUsageHooks, harness_client.langgraph.
HarnessUsageCallback): a model call's cost from a price table, the Idempotency-Key that counts a call once, and
the stop when the harness answers that the run reached its budget or deadline.

Needs no agent framework: the adapters import it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple

from harness_client.errors import HarnessError
from harness_client.models import Run

__all__ = ["ModelPrice", "RunStopped", "call_cost", "stop_if_blocked", "usage_request_key"]

_COST_PLACES = Decimal("0.0001")  # the run's cost_used: 4 decimal places (runs_app.models.Run)
_PER_MILLION = Decimal(1_000_000)


class ModelPrice(NamedTuple):
    """A model's price per million tokens, as providers publish them: `ModelPrice(Decimal("2.50"),
    Decimal("10.00"))` is $2.50 per million input tokens and $10 per million output tokens."""

    input_per_million: Decimal
    output_per_million: Decimal


def call_cost(prices: Mapping[str, ModelPrice] | None, model: str, input_tokens: int, output_tokens: int
              ) -> Decimal:
    """One call's cost by the price of `model` (0 for a model the table does not name, or with no table),
    rounded to the run's 4 decimal places."""
    price = (prices or {}).get(model)
    if price is None:
        return Decimal(0)
    cost = (Decimal(input_tokens) * Decimal(price.input_per_million)
            + Decimal(output_tokens) * Decimal(price.output_per_million)) / _PER_MILLION
    return cost.quantize(_COST_PLACES, rounding=ROUND_HALF_UP)


def usage_request_key(run_id: int, call_id: str) -> str:
    """The report's Idempotency-Key, derived from the run and the model call's own id: a report sent again (the
    client's retry, a hook called twice, a process that restarts and reports the same response) replays the
    first answer and is counted once. Hashed, so any id fits the key's 200 characters."""
    digest = hashlib.sha256(f"{run_id}\x00{call_id}".encode()).hexdigest()[:48]
    return f"usage-{run_id}-{digest}"


class RunStopped(HarnessError):
    """The harness stopped the run: the usage just reported took it to its token or cost budget, or it is past
    its deadline (`run.blocked_step` is `budget` or `deadline`), or it was blocked already. Raised from the
    adapter's hook, so the agent makes no further model or tool call. `run` is the run as the report answered."""

    def __init__(self, run: Run) -> None:
        super().__init__(
            f"Run {run.id} is blocked at {run.blocked_step or '?'} ({run.tokens_used} tokens, cost {run.cost_used}"
            f" used): no further model or tool call.",
            code="run_stopped", body={"run": run.id, "status": run.status, "blocked_step": run.blocked_step})
        self.run = run


def stop_if_blocked(run: Run) -> Run:
    """The run the report answered, or RunStopped when it is blocked."""
    if run.status == "blocked":
        raise RunStopped(run)
    return run

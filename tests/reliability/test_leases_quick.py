"""The lease experiments of issue 19 (reliability/leases.py) at their quick counts."""

import pytest

from reliability import leases

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.worker]


def test_21_workers_whose_clocks_run_30_s_slow_and_fast_never_hold_one_lease_at_once() -> None:
    result = leases.clock_skew(quick=True)
    figures = result.figures
    assert result.passed, figures
    assert figures["double_ownership"] == 0
    assert {clock["skew_s"] for clock in figures["clocks"].values()} == {-30, 0, 30}
    assert all(abs(clock["measured_s"] - clock["skew_s"]) < 2 for clock in figures["clocks"].values())
    assert all(totals["claims"] > 0 for totals in figures["by_skew"].values())
    celery = figures["celery"]
    assert celery["succeeded"] == celery["runs"]
    assert (celery["max_requests_per_key"], celery["max_claims_per_run"], celery["runs_claimed_by_two_workers"]) == (
        1, 1, 0)

"""The soak of issue 19 (reliability/soak.py, experiment 27) in its quick form: about 30 s of mixed traffic on a
cluster of its own with autovacuum on, sampled every 5 s. The 20-minute form: `bin/reliability --only 27`."""

import json

import pytest

from reliability import soak

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.worker]


def test_27_mixed_traffic_keeps_connections_idempotency_rows_and_rss_bounded() -> None:
    result = soak.soak(quick=True)
    figures = result.figures
    assert result.passed, json.dumps({k: v for k, v in figures.items() if k != "series"}, default=str)
    assert figures["unexpected"] == {}
    assert figures["max_connections"] <= figures["connection_bound"]
    assert figures["idempotency_rows_end"] <= figures["keyed_requests"]
    assert len(figures["series"]["t"]) >= 6  # a sample every 5 s of 30, and one after the traffic
    assert all(ratio <= figures["rss_growth_bound"] for ratio in figures["rss_growth_second_half"].values())
    assert {key.split()[0] for key in figures["by_operation"]} >= {
        "item.append", "event.append", "task.save", "memory.write", "runs.list", "items.latest"}

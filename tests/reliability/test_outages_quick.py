"""The outage experiments of issue 19 (reliability/outages.py) at their quick counts: the experiment's own
PostgreSQL cluster crashed and restarted, its own redis-server flushed and restarted, under load."""

import json

import pytest

from reliability import outages

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.worker]


def test_25_postgres_crashed_under_load_loses_no_acknowledged_write_and_serves_no_5xx_once_back() -> None:
    result = outages.postgres_restart(quick=True)
    figures = result.figures
    assert result.passed, json.dumps(figures, default=str)
    assert figures["acknowledged_lost"] == 0 and figures["stored_twice"] == 0
    assert figures["5xx_after_back"] == 0
    assert figures["runs_by_status"] == {"succeeded": figures["runs"]}
    assert figures["max_executions_per_key"] == 1
    assert figures["celery_worker_alive_throughout"] and figures["gunicorn_workers_replaced"] == 0


def test_26_redis_flushed_and_restarted_loses_no_approved_run() -> None:
    result = outages.redis_flush_restart(quick=True)
    figures = result.figures
    assert result.passed, json.dumps(figures, default=str)
    assert figures["messages_flushed"] > 0
    assert figures["runs_by_status"] == {"succeeded": figures["runs"]}
    assert figures["keys_executed_once"] == figures["runs"]

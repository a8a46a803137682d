"""/metrics (harness.ops.metrics): protected by its token, parsed as Prometheus exposition text, and moved by what
happens: a request by route and status, a resume by outcome with its duration, the state in the database."""

import pytest
from django.test import Client, override_settings
from prometheus_client.parser import text_string_to_metric_families

from harness.actors import Actor
from memory_app.models import MemoryStatus, MemoryWritePolicy
from memory_app.services import memory_write
from runs_app.models import ApprovalRequest, EffectStatus, ExternalEffect
from tests import factories
from tests.worker.support import approve, demo_run, reviewer
from worker.tasks import resume_run

pytestmark = pytest.mark.django_db
TOKEN = "metrics-test-token"

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape() -> Samples:
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    assert "no-store" in response["Cache-Control"]
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(response.content.decode()) for s in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


def test_metrics_are_off_without_a_token_and_refused_with_a_wrong_one() -> None:
    with override_settings(HARNESS_METRICS_TOKEN=""):
        assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 404
    with override_settings(HARNESS_METRICS_TOKEN=TOKEN):
        assert Client().get("/metrics").status_code == 401
        assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer nope").status_code == 401


@override_settings(HARNESS_METRICS_TOKEN=TOKEN)
def test_a_resume_moves_the_resume_counters_and_its_duration_histogram() -> None:
    run = demo_run()
    approve(run, reviewer(run.project))
    before = scrape()

    assert resume_run.apply(args=[run.pk]).get() == "done"

    after = scrape()
    assert value(after, "harness_resumes_total", outcome="done") == value(before, "harness_resumes_total",
                                                                         outcome="done") + 1
    assert value(after, "harness_resume_duration_seconds_count", outcome="done") == value(
        before, "harness_resume_duration_seconds_count", outcome="done") + 1
    assert value(after, "harness_resume_duration_seconds_sum", outcome="done") > value(
        before, "harness_resume_duration_seconds_sum", outcome="done")
    # The resume consumed its effect: the database's count by state says so at the next scrape.
    assert value(after, "harness_effects", state=EffectStatus.CONSUMED) == value(
        before, "harness_effects", state=EffectStatus.CONSUMED) + 1


@override_settings(HARNESS_METRICS_TOKEN=TOKEN)
def test_requests_are_counted_by_route_and_status_with_their_latency(project) -> None:  # type: ignore[no-untyped-def]
    _, secret = factories.make_agent_token(project)
    route = "api/v1/sessions/<id:pk>/"
    before = scrape()
    Client().get("/api/v1/sessions/999999/", HTTP_AUTHORIZATION=f"Bearer {secret}")
    Client().get("/api/v1/sessions/999998/", HTTP_AUTHORIZATION=f"Bearer {secret}")
    after = scrape()
    assert value(after, "harness_http_requests_total", route=route, status="404", method="GET") == value(
        before, "harness_http_requests_total", route=route, status="404", method="GET") + 2
    assert value(after, "harness_http_request_duration_seconds_count", route=route) == value(
        before, "harness_http_request_duration_seconds_count", route=route) + 2
    # A path matching no route is one series, not one per path.
    Client().get("/no/such/page/123")
    assert value(scrape(), "harness_http_requests_total", route="unmatched", status="404") >= 1


@override_settings(HARNESS_METRICS_TOKEN=TOKEN)
def test_the_databases_state_pending_approvals_by_age_blocked_runs_effects_and_held_memory() -> None:
    run = demo_run()
    assert ApprovalRequest.objects.filter(status="pending").count() == 1
    samples = scrape()
    assert value(samples, "harness_approvals_pending", age="5m") == 1
    assert value(samples, "harness_approvals_pending") == 1  # every bucket together: the one approval, once

    ApprovalRequest.objects.filter(pk=run.pending_approval_id).update(
        created_at=ApprovalRequest.objects.get(pk=run.pending_approval_id).created_at.replace(year=2020))
    samples = scrape()
    assert (value(samples, "harness_approvals_pending", age="older"),
            value(samples, "harness_approvals_pending", age="5m")) == (1, 0)

    approve(run, reviewer(run.project))
    ApprovalRequest.objects.filter(pk=run.pending_approval_id).update(approved_arguments={"chapter": 99})
    assert resume_run.apply(args=[run.pk]).get() == "blocked"
    assert value(scrape(), "harness_runs_blocked", step="approval_preconditions") == 1

    for state in (EffectStatus.CONFLICT, EffectStatus.UNKNOWN):
        assert ("harness_effects", frozenset({("state", state)})) in samples
    assert ExternalEffect.objects.count() == 0

    held_before = value(scrape(), "harness_memory_held_for_review")
    MemoryWritePolicy.objects.create(project=run.project, scope="project", decision="hold")
    held = memory_write(project=run.project, actor=Actor.for_agent("writer"), scope="project",
                        content="The sea is north.", source_run_id=run.pk)
    assert held.record.status == MemoryStatus.HELD
    assert value(scrape(), "harness_memory_held_for_review") == held_before + 1

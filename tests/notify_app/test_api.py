"""Agents register webhooks through the API: the secret is in the registration's answer only, and signs what
the agent then receives."""

import json

import pytest
from django.test import Client

from harness.actors import Actor
from harness.models import AuditEntry
from notify_app import signing, tasks
from notify_app.models import Webhook, WebhookDelivery
from runs_app.models import RunStatus
from runs_app.services import run_transition
from tests import factories
from tests.notify_app.receiver import receiving_server

pytestmark = pytest.mark.django_db


def _agent(project) -> Client:  # type: ignore[no-untyped-def]
    _, raw = factories.make_agent_token(project)
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def test_a_registered_webhook_receives_run_changes_signed_with_the_secret_it_was_given(project, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(tasks, "enqueue", lambda task, *args: None)
    agent = _agent(project)
    with receiving_server() as receiver:
        created = agent.post("/api/v1/webhooks/", {"url": receiver.url, "events": ["run.status_changed"]},
                             content_type="application/json")
        assert created.status_code == 201, created.content
        secret = created.json()["secret"]
        assert len(secret) == 64 and created.json()["project"] == project.slug
        listed = agent.get("/api/v1/webhooks/").json()["results"]
        assert [row["id"] for row in listed] == [created.json()["id"]] and "secret" not in listed[0]

        run = factories.make_run(project, factories.make_session(project), ref="R-9")
        run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
        [delivery] = WebhookDelivery.objects.all()
        tasks.deliver_webhook.apply(args=[delivery.pk])
    [request] = receiver.requests
    assert signing.verify(secret, request.body, request.headers[signing.TIMESTAMP_HEADER],
                          request.headers[signing.SIGNATURE_HEADER])
    assert json.loads(request.body)["data"]["ref"] == "R-9"


def test_registration_refuses_unknown_events_and_deactivation_stops_deliveries(project) -> None:  # type: ignore[no-untyped-def]
    agent = _agent(project)
    bad = agent.post("/api/v1/webhooks/", {"url": "https://h.example.com/", "events": ["run.deleted"]},
                     content_type="application/json")
    assert bad.status_code == 400 and set(bad.json()) >= {"code", "detail"}
    created = agent.post("/api/v1/webhooks/", {"url": "https://h.example.com/", "events": ["run.status_changed"]},
                         content_type="application/json").json()
    done = agent.post(f"/api/v1/webhooks/{created['id']}/deactivate/", {}, content_type="application/json")
    assert done.status_code == 200 and done.json()["active"] is False
    assert not Webhook.objects.get(pk=created["id"]).active
    run = factories.make_run(project, factories.make_session(project))
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    assert not WebhookDelivery.objects.exists()
    assert AuditEntry.objects.filter(action="webhook.deactivated", target_id=str(created["id"])).exists()
    assert Actor.for_agent("agent-1").label in Webhook.objects.get(pk=created["id"]).created_by

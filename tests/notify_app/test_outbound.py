"""Webhook and Slack URLs never lead the service inside its own network (SSRF): refused at registration, and at
every send after resolving the name again, connected to the address that was checked, redirects not followed.

These tests turn HARNESS_WEBHOOK_ALLOW_PRIVATE off (bin/test turns it on for the suite's local receivers) and play
DNS by replacing `notify_app.outbound._getaddrinfo`; `localhost` is resolved for real.
"""

import socket
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from harness.actors import Actor
from harness.models import AuditEntry
from notify_app import outbound, tasks
from notify_app.models import DeliveryStatus, ProjectNotification, Webhook, WebhookAttempt, WebhookDelivery
from notify_app.services import webhook_register
from runs_app.models import RunStatus
from runs_app.services import run_transition
from tests import factories
from tests.notify_app.receiver import receiving_server

pytestmark = pytest.mark.django_db

EVENTS = ["run.status_changed"]


@pytest.fixture
def production(settings):  # type: ignore[no-untyped-def]
    settings.HARNESS_WEBHOOK_ALLOW_PRIVATE = False
    return settings


@pytest.fixture
def dns(monkeypatch) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """Names to the addresses they resolve to, changeable mid-test; any other name is resolved for real.
    Each lookup of a played name is counted under `lookups`."""
    table: dict[str, list[str]] = {"lookups": []}
    real: Callable[[str, int], list[str]] = outbound._getaddrinfo

    def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            return real(host, port)
        table["lookups"].append(host)
        if not table[host]:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return list(table[host])

    monkeypatch.setattr(outbound, "_getaddrinfo", resolve)
    return table


def _agent(project) -> Client:  # type: ignore[no-untyped-def]
    _, raw = factories.make_agent_token(project)
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def _register(agent: Client, url: str):  # type: ignore[no-untyped-def]
    return agent.post("/api/v1/webhooks/", {"url": url, "events": EVENTS}, content_type="application/json")


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/hook",  # loopback
    "http://127.8.9.10:8000/hook",  # loopback, the whole /8
    "http://169.254.169.254/latest/meta-data/",  # link-local: the cloud metadata service
    "http://10.0.0.7/hook",  # private
    "http://172.16.4.2/hook",  # private
    "http://192.168.1.1/hook",  # private
    "http://100.64.0.1/hook",  # shared (carrier-grade NAT)
    "http://0.0.0.0:8000/hook",  # unspecified: reaches this host
    "http://224.0.0.1/hook",  # multicast
    "http://[::1]:8000/hook",  # IPv6 loopback
    "http://[fd00::5]/hook",  # IPv6 unique local
    "http://[fe80::1]/hook",  # IPv6 link-local
    "http://[::ffff:127.0.0.1]/hook",  # IPv4-mapped loopback
    "http://[::ffff:a9fe:a9fe]/hook",  # IPv4-mapped metadata address
    "http://localhost:8000/hook",  # a name that resolves to loopback (for real)
])
def test_registration_refuses_an_internal_address(project, production, url: str) -> None:  # type: ignore[no-untyped-def]
    response = _register(_agent(project), url)
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "webhook_address_forbidden"
    assert not Webhook.objects.exists()
    assert not AuditEntry.objects.filter(action="webhook.registered").exists()


def test_registration_refuses_a_name_resolving_to_loopback_or_with_any_internal_address(
        project, production, dns) -> None:  # type: ignore[no-untyped-def]
    dns["hooks.example.test"] = ["127.0.0.1"]
    dns["mixed.example.test"] = ["93.184.216.34", "10.0.0.1"]  # one public address is not enough
    agent = _agent(project)
    for url in ("https://hooks.example.test/h", "https://mixed.example.test/h"):
        response = _register(agent, url)
        assert (response.status_code, response.json()["code"]) == (400, "webhook_address_forbidden")
        assert "resolves to" in response.json()["detail"]
    assert not Webhook.objects.exists()


def test_registration_refuses_a_name_it_cannot_resolve_and_accepts_a_public_one(
        project, production, dns) -> None:  # type: ignore[no-untyped-def]
    dns["nowhere.example.test"] = []
    dns["public.example.test"] = ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]
    agent = _agent(project)
    unresolvable = _register(agent, "https://nowhere.example.test/h")
    assert (unresolvable.status_code, unresolvable.json()["code"]) == (400, "webhook_host_unresolvable")
    assert _register(agent, "https://public.example.test/h").status_code == 201
    assert _register(agent, "https://93.184.216.34/h").status_code == 201
    assert Webhook.objects.count() == 2


def test_a_name_that_changed_to_an_internal_address_is_refused_at_send_time_and_nothing_is_sent(
        project, production, dns, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(tasks, "enqueue", lambda task, *args: None)
    with receiving_server() as receiver:
        port = receiver.url.split(":")[2].split("/")[0]
        dns["rebind.example.test"] = ["93.184.216.34"]  # public when it is registered...
        hook = webhook_register(project=project, url=f"http://rebind.example.test:{port}/hook", events=EVENTS,
                                actor=Actor.for_agent("coder"))
        dns["rebind.example.test"] = ["127.0.0.1"]  # ...the receiver on loopback when it is sent to
        run = factories.make_run(project, factories.make_session(project))
        run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
        [delivery] = WebhookDelivery.objects.filter(webhook=hook)
        assert tasks.deliver_webhook.apply(args=[delivery.pk]).get() == DeliveryStatus.FAILED
    assert receiver.requests == []
    attempt = WebhookAttempt.objects.get(delivery=delivery)
    assert attempt.status_code is None
    assert attempt.error.startswith("Refused: rebind.example.test resolves to 127.0.0.1")
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.FAILED, 1)  # not retried: it leads inside


def test_a_slack_url_that_changed_to_an_internal_address_is_refused_at_send_time(
        project, production, dns) -> None:  # type: ignore[no-untyped-def]
    dns["slack.example.test"] = ["169.254.169.254"]
    ProjectNotification.objects.create(project=project, slack_webhook_url="https://slack.example.test/services/x")
    delivery = WebhookDelivery.objects.create(project=project, kind="slack", url="https://slack.example.test/services/x",
                                              event="approval.requested", payload={"text": "hi"})
    assert tasks.deliver_webhook.apply(args=[delivery.pk]).get() == DeliveryStatus.FAILED
    assert "169.254.169.254 (link-local)" in WebhookAttempt.objects.get(delivery=delivery).error


def test_the_connection_goes_to_the_address_checked_under_the_urls_name(project, dns, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The suite's setting (private allowed) lets the receiver on 127.0.0.1 stand in for a public host. The
    # system resolver knows nothing of `pinned.example.test`: the POST reaches the receiver only because it
    # connects to the address resolved (once) and checked, while the Host header keeps the URL's name.
    monkeypatch.setattr(tasks, "enqueue", lambda task, *args: None)
    dns["pinned.example.test"] = ["127.0.0.1"]
    with receiving_server(answers=[302]) as receiver:
        port = receiver.url.split(":")[2].split("/")[0]
        hook = webhook_register(project=project, url=f"http://pinned.example.test:{port}/hook?x=1", events=EVENTS,
                                actor=Actor.for_agent("coder"))
        delivery = WebhookDelivery.objects.create(project=project, webhook=hook, url=hook.url,
                                                  event="run.status_changed", payload={"event": "run.status_changed"})
        assert tasks.deliver_webhook.apply(args=[delivery.pk]).get() == DeliveryStatus.DELIVERED
    # The 302 was an answer, not followed: the retry is the next request, to the same path.
    assert [r.path for r in receiver.requests] == ["/hook?x=1", "/hook?x=1"]
    assert {r.headers["Host"] for r in receiver.requests} == {f"pinned.example.test:{port}"}
    assert dns["lookups"] == ["pinned.example.test"] * 2  # one lookup per attempt, none by the connection
    assert list(WebhookAttempt.objects.filter(delivery=delivery).values_list("status_code", "error")) == [
        (302, "HTTP 302"), (200, "")]


def test_the_admin_refuses_an_internal_slack_url(client, project, production) -> None:  # type: ignore[no-untyped-def]
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    page = client.post("/admin/notify_app/projectnotification/add/", {
        "project": project.pk, "email_reviewers": "on", "slack_webhook_url": "http://169.254.169.254/latest/"})
    assert page.status_code == 200 and b"internal address" in page.content
    assert not ProjectNotification.objects.exists()

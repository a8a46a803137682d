"""The console's webhook page: a project's webhooks and each delivery with every attempt, for members only."""

import pytest
from django.urls import reverse

from harness.actors import Actor
from notify_app import tasks
from notify_app.models import WebhookDelivery
from notify_app.services import webhook_register
from tests.console.scenario import Scene
from tests.notify_app.receiver import receiving_server

pytestmark = pytest.mark.django_db
PAGE = reverse("notify:delivery_log")


def _delivered_after_a_500(project, url: str) -> WebhookDelivery:  # type: ignore[no-untyped-def]
    hook = webhook_register(project=project, url=url, events=["run.status_changed"], actor=Actor.for_agent("coder"))
    delivery = WebhookDelivery.objects.create(project=project, webhook=hook, url=hook.url, event="run.status_changed",
                                              payload={"event": "run.status_changed", "data": {"ref": "<b>R-1</b>"}})
    tasks.deliver_webhook.apply(args=[delivery.pk])
    return delivery


def test_the_log_shows_each_attempt_of_a_delivery(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    with receiving_server(answers=[500]) as receiver:
        delivery = _delivered_after_a_500(scene.project, receiver.url)
    body = reviewer_client.get(PAGE).content.decode()
    row = body.split(f'data-delivery="{delivery.pk}"', 1)[1].split("</tr>", 1)[0]
    assert 'data-status="delivered"' in body and "HTTP 500" in row and "HTTP 200" in row
    assert row.count('class="attempt"') == 2
    assert "&lt;b&gt;R-1&lt;/b&gt;" in row and "<b>R-1</b>" not in row  # the payload, escaped
    assert delivery.webhook.secret not in body  # the secret is never shown
    failed_only = reviewer_client.get(PAGE + "?status=failed").content.decode()
    assert f'data-delivery="{delivery.pk}"' not in failed_only


def test_another_projects_webhooks_and_deliveries_are_not_shown(scene: Scene, other_scene: Scene,
                                                                reviewer_client) -> None:  # type: ignore[no-untyped-def]
    with receiving_server() as receiver:
        theirs = _delivered_after_a_500(other_scene.project, receiver.url + "/globex")
    body = reviewer_client.get(PAGE).content.decode()
    assert f'data-delivery="{theirs.pk}"' not in body and "/globex" not in body

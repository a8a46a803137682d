"""A question's notices (issue 33, part 4): routed to a group, only its members are emailed and its chat webhook gets
a Slack-compatible message with the link to the question's page; unrouted, the project's reviewers are emailed; an
agent's webhook subscribed to question.asked gets a signed delivery."""

import json
from typing import Any

import pytest
from django.core import mail

from harness.actors import Actor
from notify_app import tasks
from notify_app.models import DeliveryKind, DeliveryStatus, Webhook, WebhookDelivery
from runs_app.models import ReviewerGroup
from runs_app.services.questions import question_ask
from tests import factories
from tests.notify_app.receiver import receiving_server

pytestmark = pytest.mark.django_db


def _reviewer(project, name: str) -> Any:  # type: ignore[no-untyped-def]
    user = factories.make_user(name, role="reviewer", projects=[project])
    user.email = f"{name}@example.com"
    user.save()
    return user


def _ask(project, **kwargs: Any) -> Any:  # type: ignore[no-untyped-def]
    return question_ask(project=project, actor=Actor.for_agent("writer-1"), question="Which cover?",
                        idempotency_key=kwargs.pop("key", "q-1"), **kwargs)


def test_a_routed_question_tells_its_group_only(project, sent, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    editors = ReviewerGroup.objects.create(project=project, name="editors")
    editors.members.add(_reviewer(project, "ada"))
    _reviewer(project, "bob")  # a reviewer outside the group: not told
    with receiving_server() as chat:
        ReviewerGroup.objects.filter(pk=editors.pk).update(chat_webhook_url=chat.url)
        with django_capture_on_commit_callbacks(execute=True):
            asked = _ask(project, group=editors.pk)
        [(facts,)] = [args for name, args in sent if name == "notify.notify_question"]
        assert tasks.notify_question_task.apply(args=[facts]).get() == 1
        assert [m.to for m in mail.outbox] == [["ada@example.com"]]
        assert f"/questions/{asked.pk}/" in mail.outbox[0].body
        [delivery_id] = [args[0] for name, args in sent if name == "notify.deliver_webhook"]
        assert WebhookDelivery.objects.get(pk=delivery_id).kind == DeliveryKind.SLACK
        assert tasks.deliver_webhook.apply(args=[delivery_id]).get() == DeliveryStatus.DELIVERED
    [request] = chat.requests
    body = json.loads(request.body)
    assert "Which cover?" in body["text"] and f"/questions/{asked.pk}/" in body["blocks"][0]["text"]["text"]


def test_an_unrouted_question_tells_the_project_s_reviewers_and_subscribed_agents(  # type: ignore[no-untyped-def]
        project, sent, django_capture_on_commit_callbacks) -> None:
    _reviewer(project, "ada"), _reviewer(project, "bob")
    hook = Webhook.objects.create(project=project, url="https://agents.example.com/hook", events=["question.asked"],
                                  secret="s" * 32)
    with django_capture_on_commit_callbacks(execute=True):
        asked = _ask(project)
    [(facts,)] = [args for name, args in sent if name == "notify.notify_question"]
    assert tasks.notify_question_task.apply(args=[facts]).get() == 2
    assert sorted(m.to[0] for m in mail.outbox) == ["ada@example.com", "bob@example.com"]
    signed = WebhookDelivery.objects.get(webhook=hook)
    assert (signed.kind, signed.event, signed.payload["data"]["question_id"]) == (DeliveryKind.SIGNED,
                                                                                   "question.asked", asked.pk)

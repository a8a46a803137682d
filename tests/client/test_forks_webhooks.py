"""Forking from a checkpoint and registering webhooks through the client, against a live server."""

import pytest
from harness_client import HarnessClient

from runs_app.models import Checkpoint
from tests.client.conftest import Live

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_fork_from_a_checkpoint_is_a_new_run_whose_first_checkpoint_has_it_as_parent(
    live: Live, hc: HarnessClient,
) -> None:
    session = hc.create_session(role="writer", memory_policy="session", ref="F-1")
    run = hc.create_run(session=session.id)
    source = hc.create_checkpoint(run=run.id, label="draft", state={"title": "Storm", "words": 900})

    fork = hc.fork_checkpoint(source.id, reason="try a calmer title", state={"title": "Calm", "words": 900})
    assert fork.run.id != run.id and fork.checkpoint.run == fork.run.id and fork.checkpoint.parent == source.id
    assert fork.checkpoint.state == {"title": "Calm", "words": 900}
    assert fork.diff["changed"] == {"title": {"from": "Storm", "to": "Calm"}}
    assert Checkpoint.objects.get(pk=fork.checkpoint.id).parent_id == source.id


def test_a_webhook_is_registered_listed_without_its_secret_and_deactivated(live: Live, hc: HarnessClient) -> None:
    hook = hc.register_webhook("http://127.0.0.1:9/hook", ["approval.decided", "run.status_changed"])
    assert hook.active and hook.secret and hook.events == ["approval.decided", "run.status_changed"]
    listed = list(hc.list_webhooks())
    assert [w.id for w in listed] == [hook.id] and listed[0].secret is None
    assert hc.deactivate_webhook(hook.id).active is False

"""A project's retention policy through the client, against a live server: set, read, dry run, then a pass."""

import io

import pytest
from django.core.management import call_command
from harness_client import HarnessClient
from harness_client.errors import PermissionDenied, ValidationError

from harness.models import AuditEntry
from runs_app.models import RunEvent
from tests import factories
from tests.client.conftest import Live

pytestmark = pytest.mark.django_db(transaction=True)


def _operator(live: Live) -> HarnessClient:
    """The policy decides what history goes: an operator of the project sets it, by personal token."""
    user = factories.make_user("client-operator", role="operator", projects=[live.project])
    return live.client(factories.make_personal_token(user)[1])


def test_an_operator_sets_the_projects_retention_the_agent_reads_the_dry_run_and_a_pass_removes_that(
    live: Live, hc: HarnessClient,
) -> None:
    assert hc.get_retention(live.project.pk).enabled is False  # off by default: everything is kept
    session = hc.create_session(role="writer")
    done = hc.create_run(session=session.id)
    done = hc.transition_run(done.id, to="running", expected_version=done.version)
    for n in range(3):
        hc.append_event(done.id, kind="step", data={"n": n})
    hc.transition_run(done.id, to="succeeded", expected_version=hc.get_run(done.id).version)
    live_run = hc.create_run(session=session.id)
    hc.transition_run(live_run.id, to="running", expected_version=live_run.version)
    hc.append_event(live_run.id, kind="step", data={})

    with pytest.raises(PermissionDenied) as refused:
        hc.set_retention(live.project.pk, events_keep_last=1)  # the agent's own token
    assert refused.value.code == "not_an_operator"
    policy = _operator(live).set_retention(live.project.pk, events_keep_last=1)
    assert policy.enabled and policy.settings["events_keep_last"] == 1 and policy.settings["items_keep_last"] is None
    dry = hc.retention_dry_run(live.project.pk)
    gone = RunEvent.objects.filter(run_id=done.id).count() - 1
    assert dry.kinds["events"] == {"would_go": gone, "kept": {"run_live": RunEvent.objects.filter(
        run_id=live_run.id).count() - 1}}

    out = io.StringIO()
    call_command("retention", "--project", live.project.slug, stdout=out)
    assert f"events {gone}" in out.getvalue()
    assert RunEvent.objects.filter(run_id=done.id).count() == 1
    assert hc.retention_dry_run(live.project.pk).kinds["events"]["would_go"] == 0
    assert AuditEntry.objects.filter(project=live.project, action="retention.pruned").count() == 1


def test_a_bad_setting_is_a_400_with_its_code(live: Live, hc: HarnessClient) -> None:
    with pytest.raises(ValidationError) as caught:
        _operator(live).set_retention(live.project.pk, items_keep_last=-1)
    assert caught.value.code == "invalid"


def test_the_command_dry_run_prints_what_would_go_and_why_the_rest_stays(live: Live, hc: HarnessClient) -> None:
    _operator(live).set_retention(live.project.pk, items_keep_last=0)
    session = hc.create_session(role="writer")
    hc.append_items(session.id, [{"role": "user", "content": "hi"}, {"role": "user", "content": "there"}])
    out = io.StringIO()
    call_command("retention", "--dry-run", stdout=out)
    assert f"{live.project.slug} items: would remove 2; kept by rule: none" in out.getvalue()

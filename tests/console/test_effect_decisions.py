"""Issue 16, section 4, in the console: a reviewer decides an effect whose outcome is unknown (mark delivered
with the evidence, retry under the same key, abandon); operators, other projects and forged posts cannot."""

import pytest
from django.test import Client
from django.urls import reverse

from harness.models import AuditEntry
from runs_app.models import EffectStatus, ExternalEffect, Run, RunStatus
from runs_app.services import effect_dispatch, effect_intend, effect_mark_unknown, run_transition
from tests import factories

pytestmark = pytest.mark.django_db


def _unknown_effect(project, key: str = "pay-1") -> ExternalEffect:  # type: ignore[no-untyped-def]
    """A run blocked at unknown_effect, as the worker leaves it for a tool that cannot be asked again."""
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    effect, _ = effect_intend(project=project, idempotency_key=key, tool="send_payment", arguments={"eur": 5},
                              run_id=run.pk)
    effect_dispatch(project=project, effect_id=effect.pk)
    effect = effect_mark_unknown(project=project, effect_id=effect.pk)
    run_transition(project=project, run_id=run.pk, to=RunStatus.BLOCKED, expected_version=None,
                   blocked_step="unknown_effect", failure_category="irreversible")
    return effect


def _url(name: str, effect: ExternalEffect) -> str:
    return reverse(f"runs:{name}", args=[effect.pk])


def test_the_run_inspector_links_an_unknown_effect_to_its_decision_page(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    effect = _unknown_effect(project)
    page = reviewer_client.get(reverse("runs:run_inspector", args=[effect.run_id])).content.decode()
    assert _url("effect_detail", effect) in page and "irreversible" in page
    detail = reviewer_client.get(_url("effect_detail", effect)).content.decode()
    for button in ('id="mark-delivered"', 'id="retry"', 'id="abandon"'):
        assert button in detail
    assert 'id="blocked-step">unknown_effect<' in detail


def test_a_reviewer_marks_it_delivered_with_the_evidence_and_the_result(project, reviewer, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    effect = _unknown_effect(project)
    missing = reviewer_client.post(_url("effect_mark_delivered", effect), {"result": "{}", "evidence": " "})
    assert missing.status_code == 400 and "This field is required" in missing.content.decode()
    bad_json = reviewer_client.post(_url("effect_mark_delivered", effect), {"result": "{", "evidence": "bank stmt"})
    assert bad_json.status_code == 400
    assert ExternalEffect.objects.get(pk=effect.pk).status == EffectStatus.UNKNOWN

    response = reviewer_client.post(_url("effect_mark_delivered", effect), {
        "version": effect.version, "evidence": "bank statement line 42", "result": '{"paid": true, "ref": "T-9"}'})

    assert response.status_code == 302 and response["Location"] == _url("effect_detail", effect)
    effect.refresh_from_db()
    assert (effect.status, effect.result, effect.resolution["by"]) == (EffectStatus.DELIVERED, {"paid": True,
                                                                                               "ref": "T-9"}, "rita")
    entry = AuditEntry.objects.get(target_type="externaleffect", target_id=str(effect.pk))
    assert (entry.action, entry.actor, entry.data["evidence"]) == ("effect.mark_delivered", "user:rita",
                                                                   "bank statement line 42")
    page = reviewer_client.get(_url("effect_detail", effect)).content.decode()
    assert 'id="mark-delivered"' not in page and "bank statement line 42" in page


def test_retry_and_abandon_and_a_stale_page(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    retried, abandoned = _unknown_effect(project, "pay-1"), _unknown_effect(project, "pay-2")
    assert reviewer_client.post(_url("effect_retry", retried), {"version": retried.version}).status_code == 302
    assert ExternalEffect.objects.get(pk=retried.pk).retry_authorized is True

    assert reviewer_client.post(_url("effect_abandon", abandoned), {"reason": ""}).status_code == 400
    stale = reviewer_client.post(_url("effect_abandon", abandoned), {"reason": "no", "version": abandoned.version - 1})
    assert stale.status_code == 409 and 'id="conflict"' in stale.content.decode()
    assert reviewer_client.post(_url("effect_abandon", abandoned), {"reason": "refunded by hand"}).status_code == 302
    assert ExternalEffect.objects.get(pk=abandoned.pk).status == EffectStatus.ABANDONED
    again = reviewer_client.post(_url("effect_retry", abandoned), {})
    assert again.status_code == 409
    assert Run.objects.get(pk=abandoned.run_id).status == RunStatus.BLOCKED  # the worker moves it, not the page


def test_operators_other_projects_agents_and_forged_posts_cannot_decide(  # type: ignore[no-untyped-def]
    project, other_project, reviewer, operator_client, client_for
) -> None:
    effect = _unknown_effect(project)
    assert operator_client.post(_url("effect_retry", effect), {}).status_code == 403
    assert "You do not hold the reviewer role" in operator_client.get(_url("effect_detail", effect)).content.decode()
    outsider = client_for(factories.make_user("bob", role="reviewer", projects=[other_project]))
    assert outsider.get(_url("effect_detail", effect)).status_code == 404
    assert outsider.post(_url("effect_retry", effect), {}).status_code == 404
    _, secret = factories.make_agent_token(project)
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert agent.post(_url("effect_retry", effect), {}).status_code in (302, 403)
    forged = Client(enforce_csrf_checks=True)
    forged.force_login(reviewer)
    assert forged.post(_url("effect_retry", effect), {}).status_code == 403
    effect.refresh_from_db()
    assert (effect.status, effect.retry_authorized, effect.resolution) == (EffectStatus.UNKNOWN, False, None)

"""The console's handoff page and the run inspector's handoff list (issue 16, section 1)."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from harness.actors import Actor
from harness.canonical import digest
from runs_app.services import handoff_accept, handoff_issue, handoff_return, run_transition
from tests import factories

pytestmark = pytest.mark.django_db


def _returned_handoff(project, *, shared: bool = False):  # type: ignore[no-untyped-def]
    writer = factories.make_session(project, role="writer")
    origin = factories.make_run(project, writer)
    run_transition(project=project, run_id=origin.pk, to="running", expected_version=None)
    receiver = writer if shared else factories.make_session(project, role="semantic_reviewer", memory_policy="none")
    handoff = handoff_issue(project=project, origin_run_id=origin.pk, receiver_session_id=receiver.pk,
                            objective="Judge <b>chapter</b> 3.",
                            inputs=[{"name": "chapter", "fingerprint": digest("The lamp."), "value": "The lamp."}],
                            allowed_capabilities=["read_input"], output_schema={"type": "object"},
                            deadline=timezone.now() + dt.timedelta(hours=1), actor=Actor.for_agent("writer"))
    handoff_accept(project=project, handoff_id=handoff.pk, receiver_run_id=factories.make_run(project, receiver).pk,
                   actor=Actor.for_agent("reviewer"))
    return handoff_return(project=project, handoff_id=handoff.pk, packet_fingerprint=handoff.packet_fingerprint,
                          result={"verdict": "pass"}, actor=Actor.for_agent("reviewer"))


def test_the_handoff_page_shows_packet_status_result_independence_and_origin(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    handoff = _returned_handoff(project)
    body = reviewer_client.get(reverse("runs:handoff_detail", args=[handoff.pk])).content.decode()
    assert handoff.packet_fingerprint in body
    assert "Judge &lt;b&gt;chapter&lt;/b&gt; 3." in body  # agent text is escaped
    assert '&quot;verdict&quot;: &quot;pass&quot;' in body and 'id="handoff-status">returned' in body
    assert reverse("runs:run_inspector", args=[handoff.origin_run_id]) in body
    assert "counts</span>" in body and "check-own_session" in body


def test_a_shared_session_shows_why_it_is_not_an_independent_review(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    handoff = _returned_handoff(project, shared=True)
    body = reviewer_client.get(reverse("runs:handoff_detail", args=[handoff.pk])).content.decode()
    assert "does not count" in body
    assert "the receiver session is the origin run&#x27;s own session" in body


def test_the_run_inspector_lists_the_runs_handoffs(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    handoff = _returned_handoff(project)
    origin = reviewer_client.get(reverse("runs:run_inspector", args=[handoff.origin_run_id])).content.decode()
    receiver = reviewer_client.get(reverse("runs:run_inspector", args=[handoff.receiver_run_id])).content.decode()
    link = reverse("runs:handoff_detail", args=[handoff.pk])
    assert link in origin and "issued by this run" in origin
    assert link in receiver and "received by this run" in receiver


def test_another_projects_handoff_is_a_404(project, other_project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    theirs = _returned_handoff(other_project)
    assert reviewer_client.get(reverse("runs:handoff_detail", args=[theirs.pk])).status_code == 404


# --- a human reviewer answers in the console ------------------------------------------------------------


def _issued_to(project, role: str):  # type: ignore[no-untyped-def]
    origin = factories.make_run(project, factories.make_session(project, role="writer"))
    run_transition(project=project, run_id=origin.pk, to="running", expected_version=None)
    receiver = factories.make_session(project, role=role, memory_policy="none")
    return handoff_issue(project=project, origin_run_id=origin.pk, receiver_session_id=receiver.pk,
                         objective="Is chapter 3 ready?", inputs=[], allowed_capabilities=[],
                         output_schema={"type": "object", "required": ["ready"],
                                        "properties": {"ready": {"type": "boolean"}}},
                         deadline=timezone.now() + dt.timedelta(hours=1), actor=Actor.for_agent("writer"))


def test_a_reviewer_answers_a_human_reviewers_handoff_with_its_own_invocation(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    from runs_app.models import Handoff, Run

    handoff = _issued_to(project, "human_reviewer")
    page = reviewer_client.get(reverse("runs:handoff_detail", args=[handoff.pk])).content.decode()
    assert 'id="answer-form"' in page and "csrfmiddlewaretoken" in page

    response = reviewer_client.post(reverse("runs:handoff_answer", args=[handoff.pk]),
                                   {"version": handoff.version, "result": '{"ready": true}'})

    assert response.status_code == 302
    answered = Handoff.objects.get(pk=handoff.pk)
    assert (answered.status, answered.result, answered.returned_by) == ("returned", {"ready": True}, "user:rita")
    invocation = Run.objects.get(pk=answered.receiver_run_id)
    assert (invocation.session_id, invocation.task_mode) == (handoff.receiver_session_id, "handoff_review")


def test_an_answer_the_schema_refuses_changes_nothing(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    from runs_app.models import Handoff

    handoff = _issued_to(project, "human_reviewer")
    response = reviewer_client.post(reverse("runs:handoff_answer", args=[handoff.pk]),
                                   {"version": handoff.version, "result": '{"ready": "yes"}'})
    assert response.status_code == 400 and 'id="answer-error"' in response.content.decode()
    stored = Handoff.objects.get(pk=handoff.pk)
    assert (stored.status, stored.receiver_run_id, stored.result) == ("issued", None, None)  # the acceptance undone


def test_only_a_human_reviewers_handoff_is_answered_and_only_by_a_reviewer_with_csrf(  # type: ignore[no-untyped-def]
    project, reviewer, reviewer_client, operator_client
) -> None:
    from django.test import Client

    from runs_app.models import Handoff

    machine = _issued_to(project, "semantic_reviewer")
    page = reviewer_client.get(reverse("runs:handoff_detail", args=[machine.pk])).content.decode()
    assert 'id="answer-form"' not in page
    refused = reviewer_client.post(reverse("runs:handoff_answer", args=[machine.pk]),
                                   {"version": machine.version, "result": '{"ready": true}'})
    assert refused.status_code == 409

    human = _issued_to(project, "human_reviewer")
    url = reverse("runs:handoff_answer", args=[human.pk])
    assert operator_client.post(url, {"version": human.version, "result": '{"ready": true}'}).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(reviewer)
    assert strict.post(url, {"version": human.version, "result": '{"ready": true}'}).status_code == 403
    assert {h.status for h in Handoff.objects.filter(pk__in=[machine.pk, human.pk])} == {"issued"}


def test_another_projects_handoff_cannot_be_answered(project, other_project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    theirs = _issued_to(other_project, "human_reviewer")
    response = reviewer_client.post(reverse("runs:handoff_answer", args=[theirs.pk]), {"result": '{"ready": true}'})
    assert response.status_code == 404

"""One way to say who is acting: the same Actor in every service, whichever door the call came through."""

import pytest
from django.contrib.auth.models import AnonymousUser

from harness.actors import Actor, ActorKind
from harness.http.auth import AgentPrincipal
from harness.http.errors import ConflictError, Forbidden
from harness.models import AuditEntry
from runs_app.models import ApprovalRequest, Run
from runs_app.services import approval_decide, approval_request_create, run_transition
from tests import factories


def _waiting(project, requester: Actor) -> ApprovalRequest:  # type: ignore[no-untyped-def]
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to="running", expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool="publish", arguments={"ch": 1},
                                   idempotency_key=f"k-{run.pk}", actor=requester)


def test_each_kind_of_actor_has_its_own_label() -> None:
    class Token:
        pass

    token = Token()
    assert Actor.for_agent("writer-1", token).label == "agent:writer-1"  # type: ignore[arg-type]
    assert Actor.for_agent("writer-1", token).token is token  # type: ignore[arg-type]
    assert Actor.for_worker("worker:host:12:ab").label == "worker:host:12:ab"
    assert Actor.for_worker("w1").label == "worker:w1"
    assert [Actor.for_worker("w").is_worker, Actor.for_agent("a").is_agent] == [True, True]


@pytest.mark.django_db
def test_a_request_records_its_actor_and_the_agents_token(project) -> None:  # type: ignore[no-untyped-def]
    token, _ = factories.make_agent_token(project, name="writer-1")
    approval = _waiting(project, Actor.for_agent("writer-1", token))
    assert (approval.requested_by, approval.requested_by_token_id) == ("agent:writer-1", token.pk)


@pytest.mark.django_db
def test_only_a_person_decides_not_an_agent_and_not_the_worker(project) -> None:  # type: ignore[no-untyped-def]
    approval = _waiting(project, Actor.for_agent("writer-1"))
    for actor in (Actor.for_agent("reviewer-bot"), Actor.for_worker("worker:h:1:x")):
        with pytest.raises(Forbidden) as caught:
            approval_decide(project=project, approval_id=approval.pk, actor=actor, decision="approve")
        assert caught.value.code == "not_a_reviewer"
    assert ApprovalRequest.objects.get(pk=approval.pk).status == "pending"


@pytest.mark.django_db
def test_a_person_who_asked_cannot_approve_and_the_audit_names_who_did(project) -> None:  # type: ignore[no-untyped-def]
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    ann = factories.make_user("ann", role="reviewer", projects=[project])
    approval = _waiting(project, Actor.for_user(rita))
    with pytest.raises(Forbidden) as caught:
        approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(rita), decision="approve")
    assert caught.value.code == "self_approval"
    approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(ann), decision="approve")
    entry = AuditEntry.objects.get(target_id=str(approval.pk), action="approval.approved")
    assert entry.actor == "user:ann"


@pytest.mark.django_db
@pytest.mark.parametrize("actor", [None, Actor(ActorKind.USER, "admin"), Actor.for_agent("writer-1")])
def test_nobody_but_the_worker_moves_a_waiting_run_on(project, actor) -> None:  # type: ignore[no-untyped-def]
    approval = _waiting(project, Actor.for_agent("writer-1"))
    run = Run.objects.get(pk=approval.run_id)
    with pytest.raises(ConflictError) as caught:
        run_transition(project=project, run_id=run.pk, to="running", expected_version=run.version, actor=actor)
    assert caught.value.code == "worker_only_transition"
    moved = run_transition(project=project, run_id=run.pk, to="running", expected_version=run.version,
                           actor=Actor.for_worker("worker:h:1:x"))
    assert moved.status == "running"


@pytest.mark.django_db
def test_a_request_user_is_an_agent_token_or_a_person_and_nothing_else(project) -> None:  # type: ignore[no-untyped-def]
    token, _ = factories.make_agent_token(project, name="writer-1")
    agent = Actor.of(AgentPrincipal(token=token, project=project))
    assert (agent.kind, agent.label, agent.token, agent.user) == (ActorKind.AGENT, "agent:writer-1", token, None)
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    person = Actor.of(rita)
    assert (person.kind, person.label, person.user, person.token) == (ActorKind.USER, "user:rita", rita, None)
    with pytest.raises(TypeError, match="AnonymousUser"):  # every door authenticates before it acts
        Actor.of(AnonymousUser())

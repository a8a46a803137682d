"""Who may act, per project, through the API (issues 16.5 and 17.4): a frozen project refuses every agent write
and every decision with 409 `project_frozen` and still answers reads; a reviewer of one project decides there
and nowhere else."""

from typing import Any

import pytest

from harness.actors import Actor
from harness.models import AuditEntry, Membership, Project
from harness.projects import project_freeze, project_unfreeze
from runs_app.models import ApprovalRequest, Run, RunEvent
from sessions_app.models import SessionItem
from tests import factories
from tests.api.conftest import ApiClient, World
from tests.api.test_access import DECIDE, ENDPOINTS, READ, WRITE, Endpoint, _call

pytestmark = pytest.mark.django_db

WRITES = [e for e in ENDPOINTS if e.kind == WRITE]
READS = [e for e in ENDPOINTS if e.kind == READ]
DECISIONS = [e for e in ENDPOINTS if e.kind == DECIDE]


def _freeze(project: Project) -> None:
    admin = factories.make_user(f"admin-{project.slug}", role="admin", projects=[project])
    project_freeze(project=project, actor=Actor.for_user(admin), reason="incident 42")


def _written() -> tuple[int, ...]:
    return (Run.objects.count(), RunEvent.objects.count(), SessionItem.objects.count(),
            ApprovalRequest.objects.count(), AuditEntry.objects.exclude(action="project.frozen").count())


@pytest.mark.parametrize("endpoint", WRITES, ids=[e.operation for e in WRITES])
def test_every_agent_write_to_a_frozen_project_is_refused_with_project_frozen(endpoint: Endpoint, world: World
                                                                             ) -> None:
    # Some build a record to act on (an approval a reviewer approves, say): before the freeze and the count.
    path, body = endpoint.path(world), endpoint.body(world)
    _freeze(world.project)
    before = _written()
    response = world.agent.call(endpoint.method, path, body)
    assert response.status_code == 409, response.content
    assert response.json()["code"] == "project_frozen"
    assert _written() == before  # nothing half-written


@pytest.mark.parametrize("endpoint", READS, ids=[e.operation for e in READS])
def test_reads_of_a_frozen_project_still_answer(endpoint: Endpoint, world: World) -> None:
    _freeze(world.project)
    response = _call(world.agent, endpoint, world)
    assert response.status_code == endpoint.owner_status, response.content


@pytest.mark.parametrize("endpoint", DECISIONS, ids=[e.operation for e in DECISIONS])
def test_a_decision_in_a_frozen_project_is_refused(endpoint: Endpoint, world: World) -> None:
    _freeze(world.project)
    response = _call(world.reviewer, endpoint, world)
    assert response.status_code == 409, response.content
    assert response.json()["code"] == "project_frozen"
    world.approval.refresh_from_db()
    assert world.approval.status == "pending"


def test_a_memory_write_to_a_frozen_project_is_refused(world: World) -> None:
    _freeze(world.project)
    body = {"scope": "project", "content": "The build uses Python 3.11.", "source_run_id": world.run.pk}
    response = world.agent.post("/api/v1/memory/records/", body)
    assert (response.status_code, response.json()["code"]) == (409, "project_frozen")


def test_another_projects_agent_still_writes_while_one_is_frozen(world: World, other_world: World) -> None:
    _freeze(world.project)
    response = other_world.agent.post("/api/v1/sessions/", {"role": "writer", "memory_policy": "session"})
    assert response.status_code == 201, response.content


def test_after_unfreezing_the_agent_writes_again(world: World) -> None:
    _freeze(world.project)
    admin = Membership.objects.get(project=world.project, user__username=f"admin-{world.project.slug}").user
    project_unfreeze(project=world.project, actor=Actor.for_user(admin))
    response = world.agent.post("/api/v1/sessions/", {"role": "writer", "memory_policy": "session"})
    assert response.status_code == 201, response.content


# --- per-project reviewers -------------------------------------------------------------------------------


def _project_reviewer(world: World, other_world: World) -> ApiClient:
    """Member of both projects, reviewer (by the membership's roles, no global group) only in `world`'s."""
    user = factories.make_user("paula")
    Membership.objects.create(user=user, project=world.project, roles=["reviewer"])
    Membership.objects.create(user=user, project=other_world.project, roles=[])
    return ApiClient(factories.make_personal_token(user)[1])


def _decide(client: ApiClient, approval: ApprovalRequest) -> Any:
    return client.post(f"/api/v1/approvals/{approval.pk}/decision/",
                       {"decision": "approve", "expected_version": approval.version})


def test_a_reviewer_of_one_project_decides_there(world: World, other_world: World) -> None:
    response = _decide(_project_reviewer(world, other_world), world.approval)
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "approved"


def test_a_reviewer_of_one_project_cannot_decide_in_another_it_only_reads(world: World, other_world: World) -> None:
    paula = _project_reviewer(world, other_world)
    assert paula.get(f"/api/v1/approvals/{other_world.approval.pk}/").status_code == 200  # reads
    response = _decide(paula, other_world.approval)
    assert (response.status_code, response.json()["code"]) == (403, "not_a_reviewer")
    other_world.approval.refresh_from_db()
    assert other_world.approval.status == "pending"


def test_a_member_with_no_role_anywhere_is_refused_before_the_decision(world: World, other_world: World) -> None:
    user = factories.make_user("nora")
    Membership.objects.create(user=user, project=world.project, roles=[])
    response = _decide(ApiClient(factories.make_personal_token(user)[1]), world.approval)
    assert (response.status_code, response.json()["code"]) == (403, "not_a_reviewer")


def test_the_global_reviewer_group_still_reviews_in_every_project_of_its_member(world: World) -> None:
    assert _decide(world.reviewer, world.approval).status_code == 200  # make_user(role="reviewer"): a group


@pytest.mark.parametrize("operation", ["sessions_create", "session_items_append", "checkpoints_create"])
def test_a_keyed_write_refused_by_the_freeze_runs_when_retried_after_the_unfreeze(operation: str, world: World
                                                                                   ) -> None:
    # project_frozen is not the request's final answer: it is not stored under the key, so the agent's retry
    # with the same key after the unfreeze is answered afresh, not with a replay of the 409.
    endpoint = next(e for e in WRITES if e.operation == operation)
    path, body = endpoint.path(world), endpoint.body(world)
    _freeze(world.project)
    first = world.agent.call(endpoint.method, path, body, HTTP_IDEMPOTENCY_KEY="after-the-freeze")
    assert (first.status_code, first.json()["code"]) == (409, "project_frozen")
    admin = Membership.objects.get(project=world.project, user__username=f"admin-{world.project.slug}").user
    project_unfreeze(project=world.project, actor=Actor.for_user(admin))
    retried = world.agent.call(endpoint.method, path, body, HTTP_IDEMPOTENCY_KEY="after-the-freeze")
    assert retried.status_code == 201, retried.content
    again = world.agent.call(endpoint.method, path, body, HTTP_IDEMPOTENCY_KEY="after-the-freeze")
    assert again.status_code == 201 and again.json() == retried.json()  # the 201 is stored and replayed

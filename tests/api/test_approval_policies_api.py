"""/api/v1/approval-policies/ and /api/v1/reviewer-groups/ (issue 33): an operator's personal token publishes, an
agent's token reads and is refused a write, another project is 404, and the next request records the version."""

from harness.actors import Actor
from runs_app import services as run_services
from runs_app.models import ApprovalPolicy, ReviewerGroup
from tests.api.conftest import World

POLICIES = "/api/v1/approval-policies/"


def test_an_operator_publishes_and_the_next_request_is_decided_under_it(world: World) -> None:
    group = ReviewerGroup.objects.create(project=world.project, name="finance")
    body = {"project": world.project.slug, "tool": "wire_money", "required_approvals": 2,
            "eligible_groups": [group.pk], "expires_after": "04:00:00",
            "reject_options": [{"name": "too_big", "reviewer_text": "Over budget", "agent_text": "Ask for less"}]}
    published = world.operator.post(POLICIES, body)
    assert published.status_code == 201, published.content
    data = published.json()
    assert (data["tool"], data["version"], data["required_approvals"], data["eligible_groups"]) == (
        "wire_money", 1, 2, [group.pk])
    assert data["expires_after"] == "04:00:00" and data["created_by"].startswith("user:")
    again = world.operator.post(POLICIES, {**body, "required_approvals": 3})
    assert (again.status_code, again.json()["version"]) == (201, 2)
    asked = run_services.approval_request_create(
        project=world.project, run_id=world.running_run.pk, tool="wire_money", arguments={"amount": 5},
        idempotency_key="wire-1", actor=Actor.for_agent("coder"))
    assert (asked.policy_version, asked.approvals_required) == (2, 3)
    listed = world.agent.get(POLICIES).json()["results"]
    assert [p["version"] for p in listed] == [2, 1]
    groups = world.agent.get("/api/v1/reviewer-groups/").json()["results"]
    assert [(g["name"], g["members"]) for g in groups] == [("finance", [])]


def test_agents_and_reviewers_cannot_publish(world: World) -> None:
    for caller in (world.agent, world.reviewer):
        refused = caller.post(POLICIES, {"project": world.project.slug, "tool": "x"})
        assert (refused.status_code, refused.json()["code"]) == (403, "not_an_operator")
    assert not ApprovalPolicy.objects.exists()


def test_another_projects_policies_are_neither_read_nor_written(world: World, other_world: World) -> None:
    ApprovalPolicy.objects.create(project=other_world.project, tool="theirs", version=1)
    assert world.operator.get(POLICIES).json()["results"] == []
    refused = world.operator.post(POLICIES, {"project": other_world.project.slug, "tool": "x"})
    assert refused.status_code == 404
    foreign_group = ReviewerGroup.objects.create(project=other_world.project, name="theirs")
    bad = world.operator.post(POLICIES, {"project": world.project.slug, "tool": "x",
                                         "eligible_groups": [foreign_group.pk]})
    assert (bad.status_code, bad.json()["code"], bad.json()["field"]) == (400, "invalid", "eligible_groups")
    assert not ApprovalPolicy.objects.filter(project=world.project).exists()


def test_bad_policies_are_400_with_the_field(world: World) -> None:
    for body, field in (
        ({"required_approvals": 0}, "required_approvals"),
        ({"on_expiry": "escalate"}, "escalate_to"),
        ({"reject_options": [{"name": "a"}, {"name": "a"}]}, "reject_options"),
        ({"server_owned": 1}, None),
    ):
        refused = world.operator.post(POLICIES, {"project": world.project.slug, "tool": "x", **body})
        assert refused.status_code == 400, (body, refused.content)
        if field:
            answer = refused.json()  # the serializer's `fields`, or the service's one `field`
            assert answer.get("field") == field or field in answer.get("fields", {}), answer
    assert not ApprovalPolicy.objects.exists()

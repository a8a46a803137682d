"""/api/v1/standing-approvals/ (issue 33, part 2): a reviewer's personal token writes a rule, the agent's next matching
request through the API comes back approved and naming it, a revoke stops it at once (a second is 409
already_revoked), and the refusals carry their codes: an agent writes none, never for an always-ask tool."""

from runs_app.models import ApprovalPolicy, StandingApproval
from tests.api.conftest import World

RULES = "/api/v1/standing-approvals/"


def _ask(world: World, key: str, chapter: int = 3) -> dict:
    run = world.running_run
    run.refresh_from_db()
    response = world.agent.post(f"/api/v1/runs/{run.pk}/approvals/",
                                {"tool": "publish", "arguments": {"chapter": chapter}, "idempotency_key": key,
                                 "expected_version": run.version})
    assert response.status_code == 201, response.content
    return response.json()


def test_a_reviewer_s_rule_approves_the_agent_s_matching_request(world: World) -> None:
    created = world.reviewer.post(RULES, {"project": world.project.slug, "tool": "publish", "max_uses": 1,
                                          "expires_in": "02:00:00", "match_arguments": {"chapter": 3},
                                          "agent": "acme-agent", "reason": "chapter 3 is proofread"})
    assert created.status_code == 201, created.content
    rule = created.json()
    assert (rule["uses"], rule["max_uses"], rule["agent"], rule["created_by"]) == (0, 1, "agent:acme-agent",
                                                                                 "acme-reviewer")

    approved = _ask(world, "publish-3")

    assert (approved["status"], approved["standing_approval"], approved["decided_by"]) == (
        "approved", rule["id"], "acme-reviewer")
    read = world.agent.get(f"{RULES}{rule['id']}/").json()
    assert read["uses"] == 1
    assert [r["id"] for r in world.agent.get(f"{RULES}?live=false").json()["results"]] == [rule["id"]]
    assert world.agent.get(f"{RULES}?live=true").json()["results"] == []


def test_a_revoke_stops_the_rule_at_once(world: World) -> None:
    rule = world.reviewer.post(RULES, {"project": world.project.slug, "tool": "publish", "max_uses": 5,
                                       "expires_in": "02:00:00"}).json()
    revoked = world.reviewer.post(f"{RULES}{rule['id']}/revoke/", {})
    assert revoked.status_code == 200 and revoked.json()["revoked_by"] == "acme-reviewer"
    assert _ask(world, "publish-after-revoke")["status"] == "pending"
    again = world.reviewer.post(f"{RULES}{rule['id']}/revoke/", {})
    assert (again.status_code, again.json()["code"]) == (409, "already_revoked")


def test_the_refusals_say_why(world: World) -> None:
    body = {"project": world.project.slug, "tool": "publish", "max_uses": 5, "expires_in": "02:00:00"}
    agent = world.agent.post(RULES, body)
    assert (agent.status_code, agent.json()["code"]) == (403, "not_a_person")
    ApprovalPolicy.objects.create(project=world.project, tool="publish", version=1, always_ask=True)
    always = world.reviewer.post(RULES, body)
    assert (always.status_code, always.json()["code"]) == (409, "always_ask")
    too_long = world.reviewer.post(RULES, {**body, "tool": "other", "expires_in": "31 00:00:00"})
    assert (too_long.status_code, too_long.json()["code"], too_long.json()["field"]) == (400, "invalid",
                                                                                        "expires_at")
    assert not StandingApproval.objects.exists()

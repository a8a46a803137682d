"""The tool registry (issue 32): an agent declares a tool's argument schema, versioned; approval requests for the
tool are validated against its current version and record it; a reviewer's edit is validated against the version
the request named, and needs a reason."""

from typing import Any

import pytest

from demo.tools import PUBLISH_CHAPTER_SCHEMA
from harness.actors import Actor
from runs_app.models import ApprovalRequest, RunStatus, ToolSchema
from runs_app.services import run_transition, tool_schema_register
from tests import factories
from tests.api.conftest import ApiClient

pytestmark = pytest.mark.django_db

SCHEMAS = "/api/v1/tools/schemas/"


@pytest.fixture
def world(settings: Any) -> dict[str, Any]:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    project, other = factories.make_project("tools"), factories.make_project("tools-other")
    rita = factories.make_user("tools-reviewer", role="reviewer", projects=[project])
    return {
        "project": project,
        "agent": ApiClient(factories.make_agent_token(project, name="tools-agent")[1]),
        "outsider": ApiClient(factories.make_agent_token(other, name="other-agent")[1]),
        "reviewer": ApiClient(factories.make_personal_token(rita)[1]),
    }


def _running_run(project: Any) -> int:
    run = factories.make_run(project)
    return run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=run.version).pk


def test_register_versions_and_reads_with_the_tenant_trio(world: dict[str, Any]) -> None:
    agent, outsider = world["agent"], world["outsider"]
    first = agent.post(SCHEMAS, {"tool": "publish_chapter", "schema": PUBLISH_CHAPTER_SCHEMA})
    assert first.status_code == 201, first.json()
    assert first.json()["version"] == 1 and first.json()["project"] == "tools"
    # The same schema again (keys in another order) is the same version, nothing written.
    again = agent.post(SCHEMAS, {"tool": "publish_chapter", "schema": dict(reversed(PUBLISH_CHAPTER_SCHEMA.items()))})
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    changed = {**PUBLISH_CHAPTER_SCHEMA, "required": ["chapter"]}
    second = agent.post(SCHEMAS, {"tool": "publish_chapter", "schema": changed})
    assert second.status_code == 201 and second.json()["version"] == 2
    assert ToolSchema.objects.filter(tool="publish_chapter").count() == 2  # the old version stays
    listed = agent.get(f"{SCHEMAS}?tool=publish_chapter").json()["results"]
    assert [row["version"] for row in listed] == [2, 1]
    assert agent.get(f"{SCHEMAS}{first.json()['id']}/").json()["schema"] == PUBLISH_CHAPTER_SCHEMA
    # Another project's token sees none of it; nobody anonymous reads or writes.
    assert outsider.get(SCHEMAS).json()["results"] == []
    assert outsider.get(f"{SCHEMAS}{first.json()['id']}/").status_code == 404
    assert ApiClient().get(SCHEMAS).status_code == 401
    assert ApiClient().post(SCHEMAS, {"tool": "x", "schema": {}}).status_code == 401


@pytest.mark.parametrize("schema", [
    {"type": "string"},  # not an object's schema
    {"type": "object", "properties": {"chapter": {"type": "integr"}}},  # not a valid JSON Schema
    {"type": "object", "required": "chapter"},
])
def test_a_schema_that_is_not_a_json_schema_of_an_object_is_refused(world: dict[str, Any], schema: Any) -> None:
    refused = world["agent"].post(SCHEMAS, {"tool": "publish_chapter", "schema": schema})
    assert refused.status_code == 400 and refused.json()["code"] == "schema_invalid", refused.json()
    assert not ToolSchema.objects.exists()


def test_server_fields_are_not_writable(world: dict[str, Any]) -> None:
    refused = world["agent"].post(SCHEMAS, {"tool": "t", "schema": {"type": "object"}, "version": 7})
    assert refused.status_code == 400 and refused.json()["code"] == "unknown_field"


def test_an_approval_request_is_validated_against_the_current_schema_and_records_its_version(
    world: dict[str, Any],
) -> None:
    project, agent = world["project"], world["agent"]
    tool_schema_register(project=project, tool="publish_chapter", schema={"type": "object"},
                         actor=Actor.for_agent("a"))
    current, _ = tool_schema_register(project=project, tool="publish_chapter", schema=PUBLISH_CHAPTER_SCHEMA,
                                      actor=Actor.for_agent("a"))
    run_id = _running_run(project)
    bad = agent.post(f"/api/v1/runs/{run_id}/approvals/", {
        "tool": "publish_chapter", "idempotency_key": "k1",
        "arguments": {"chapter": "three", "title": "The Lighthouse", "colour": "red"}})
    assert bad.status_code == 400, bad.json()
    body = bad.json()
    assert body["code"] == "arguments_invalid" and body["field"] == "chapter" and body["schema_version"] == 2
    assert {e["field"] for e in body["errors"]} == {"chapter", "colour"}
    assert not ApprovalRequest.objects.exists()

    asked = agent.post(f"/api/v1/runs/{run_id}/approvals/", {
        "tool": "publish_chapter", "idempotency_key": "k1", "arguments": {"chapter": 3, "title": "The Lighthouse"}})
    assert asked.status_code == 201, asked.json()
    assert (asked.json()["tool_schema"], asked.json()["tool_schema_version"]) == (current.pk, 2)

    # A tool with no declared schema: asked as before, and the approval says it was not checked.
    other = agent.post(f"/api/v1/runs/{_running_run(project)}/approvals/", {
        "tool": "send_newsletter", "idempotency_key": "k2", "arguments": {"anything": ["goes"]}})
    assert other.status_code == 201 and other.json()["tool_schema_version"] is None

    # The reviewer's edit: validated against version 2, and it needs a reason.
    decision = f"/api/v1/approvals/{asked.json()['id']}/decision/"
    version = asked.json()["version"]
    unexplained = world["reviewer"].post(decision, {"decision": "approve", "expected_version": version,
                                                    "edited_arguments": {"chapter": 4, "title": "Keeper"}})
    assert unexplained.status_code == 400 and unexplained.json()["code"] == "reason_required"
    wrong = world["reviewer"].post(decision, {"decision": "approve", "expected_version": version, "reason": "r",
                                              "edited_arguments": {"chapter": 4, "title": "Keeper", "colour": "red"}})
    assert wrong.status_code == 400 and (wrong.json()["code"], wrong.json()["field"]) == ("arguments_invalid",
                                                                                          "colour")
    assert ApprovalRequest.objects.get(pk=asked.json()["id"]).status == "pending"
    edited = world["reviewer"].post(decision, {"decision": "approve", "expected_version": version,
                                               "reason": "chapter 4 is next",
                                               "edited_arguments": {"chapter": 4, "title": "Keeper"}})
    assert edited.status_code == 200 and edited.json()["approved_arguments"] == {"chapter": 4, "title": "Keeper"}

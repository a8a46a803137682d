"""The tool registry through the client (issue 32): register, list and read a tool's schema; the LangGraph
adapter registers LangChain tools' schemas (once per schema); a request that breaks the schema is refused."""

import pytest
from harness_client import HarnessClient, ValidationError
from harness_client.langgraph import register_tool_schemas, tool_json_schema
from langchain_core.tools import tool

from runs_app.models import ToolSchema
from tests.client.conftest import Live

pytestmark = pytest.mark.django_db(transaction=True)


@tool
def publish_chapter(chapter: int, title: str) -> str:
    """Publish a chapter to the readers."""
    return f"chapter {chapter} is out"


@tool
def publish_draft(chapter: int, notes: str = "") -> str:
    """Publish a draft."""
    return "ok"


def test_the_langgraph_adapter_registers_its_tools_schemas_and_requests_are_checked(live: Live, hc: HarnessClient
                                                                                     ) -> None:
    assert register_tool_schemas(hc, [publish_chapter, publish_draft]) == {"publish_chapter": 1, "publish_draft": 1}
    assert register_tool_schemas(hc, [publish_chapter]) == {"publish_chapter": 1}  # the same schema: a no-op
    assert ToolSchema.objects.filter(project=live.project).count() == 2
    stored = ToolSchema.objects.get(project=live.project, tool="publish_chapter")
    assert stored.schema == tool_json_schema(publish_chapter)
    assert stored.schema["required"] == ["chapter", "title"]

    listed = list(hc.list_tool_schemas(tool="publish_chapter"))
    assert [(s.tool, s.version) for s in listed] == [("publish_chapter", 1)]
    assert hc.get_tool_schema(listed[0].id).schema == stored.schema
    changed = hc.register_tool_schema("publish_chapter", {**stored.schema, "additionalProperties": False})
    assert changed.version == 2

    run = hc.create_run(session=hc.create_session().id)
    hc.transition_run(run.id, "running", expected_version=run.version)
    with pytest.raises(ValidationError) as refused:
        hc.request_approval(run.id, tool="publish_chapter", idempotency_key="k",
                            arguments={"chapter": "three", "title": "x"})
    assert refused.value.code == "arguments_invalid" and refused.value.body["field"] == "chapter"
    asked = hc.request_approval(run.id, tool="publish_chapter", idempotency_key="k",
                                arguments={"chapter": 3, "title": "x"})
    assert (asked.tool_schema, asked.tool_schema_version) == (changed.id, 2)


def test_request_approval_given_the_tool_registers_its_schema_and_is_checked_against_it(live: Live,
                                                                                        hc: HarnessClient) -> None:
    from typing import Any, TypedDict

    from harness_client.langgraph import HarnessSaver, approval_ids, request_approval
    from langgraph.graph import END, START, StateGraph

    from runs_app.models import ApprovalRequest

    class State(TypedDict):
        chapter: int

    def publish(state: State) -> dict[str, Any]:
        request_approval(publish_chapter, {"chapter": state["chapter"], "title": "The Lighthouse"})
        return {}

    builder = StateGraph(State)
    builder.add_node("publish", publish)
    builder.add_edge(START, "publish")
    builder.add_edge("publish", END)
    graph = builder.compile(checkpointer=HarnessSaver(client=hc))
    result = graph.invoke({"chapter": 3}, {"configurable": {"thread_id": "schema-thread"}})
    [approval_id] = approval_ids(result["__interrupt__"])
    approval = ApprovalRequest.objects.get(pk=approval_id)
    assert approval.tool == "publish_chapter" and approval.tool_schema_version == 1
    assert approval.tool_schema.schema == tool_json_schema(publish_chapter)

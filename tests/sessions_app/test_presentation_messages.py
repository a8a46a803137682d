"""Conversation items read as messages, from real SDK / LangChain shapes (sessions_app.presentation)."""

from langchain_core.load import dumpd
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, messages_to_dict
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from sessions_app.presentation import conversation_message, state_shown


def test_responses_items() -> None:
    message = ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed", content=[
        ResponseOutputText(type="output_text", text="Chapter three is ready", annotations=[], logprobs=[])])
    shown = conversation_message(message.model_dump())
    assert (shown.role, shown.text, shown.known) == ("assistant", "Chapter three is ready", True)
    call = ResponseFunctionToolCall(type="function_call", name="publish_chapter", arguments='{"chapter": 3}',
                                    call_id="call_1", id="fc_1", status="completed")
    shown = conversation_message(call.model_dump())
    assert [(c.name, c.call_id) for c in shown.tool_calls] == [("publish_chapter", "call_1")]
    assert '"chapter": 3' in shown.tool_calls[0].arguments
    result = conversation_message({"type": "function_call_output", "call_id": "call_1", "output": "published"})
    assert (result.role, result.text, result.result_of) == ("tool", "published", "call_1")


def test_chat_and_langchain_messages() -> None:
    chat = conversation_message({"role": "assistant", "content": None, "tool_calls": [
        {"id": "t1", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}}]})
    assert chat.tool_calls[0].name == "search"
    ai = AIMessage(content="ok", tool_calls=[{"name": "publish", "args": {"a": 1}, "id": "t1"}])
    for form in (ai.model_dump(), dumpd(ai), messages_to_dict([ai])[0]):
        shown = conversation_message(form)
        assert (shown.role, shown.text, shown.tool_calls[0].name) == ("assistant", "ok", "publish")
    assert conversation_message(HumanMessage("hi").model_dump()).role == "user"
    tool = conversation_message(ToolMessage("done", tool_call_id="t1").model_dump())
    assert (tool.role, tool.result_of) == ("tool", "t1")


def test_unknown_shape_falls_back_to_json_and_state_drops_branch_markers() -> None:
    shown = conversation_message({"weird": [1, 2]}, role="event")
    assert not shown.known and '"weird"' in shown.raw
    state = state_shown({"messages": [HumanMessage("hi").model_dump()], "branch:to:publish": None, "draft": "d"})
    assert [m.text for m in state.messages] == ["hi"]
    assert "branch:to" not in state.rest and "branch:to" in state.raw

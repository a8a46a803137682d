"""Conversation items as messages a reviewer reads: role, text, tool calls and tool results.

One function, `conversation_message`, reads the three shapes agents store (OpenAI Responses items, Chat Completions
messages, LangChain messages in any of their JSON forms) and the harness's own `{"text": ...}`; the session page and
the approval page show its result through one partial (templates/sessions/_messages.html). What the SDKs add for
their own bookkeeping (ids, statuses, annotations, logprobs, LangGraph's `branch:to:<node>` markers) is not shown;
the item's JSON stays one click away. A shape it does not know is shown as that JSON, never guessed at.
"""

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# LangChain's message types, as the reviewer's roles.
_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system", "chat": "assistant",
                    "function": "tool", "remove": "event"}
_LANGCHAIN_CLASSES = {"HumanMessage": "human", "AIMessage": "ai", "ToolMessage": "tool", "SystemMessage": "system",
                      "HumanMessageChunk": "human", "AIMessageChunk": "ai", "ToolMessageChunk": "tool",
                      "SystemMessageChunk": "system", "ChatMessage": "chat", "FunctionMessage": "function"}
_CHAT_ROLES = {"user", "assistant", "system", "developer", "tool", "function"}


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # pretty JSON when the arguments are JSON (a string of JSON included), else as given
    call_id: str = ""


@dataclass(frozen=True)
class Message:
    role: str  # user | assistant | system | developer | tool | reasoning | event, or the item's own role
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    result_of: str = ""  # a tool result: the call id it answers
    tool_name: str = ""  # a tool result: the tool's name, when the item says
    raw: str = ""  # the item's JSON, pretty
    known: bool = True  # False: a shape this module does not read; the page shows `raw` instead
    seq: int | None = None

    @property
    def is_tool_result(self) -> bool:
        return self.role == "tool"


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _arguments(value: Any) -> str:
    """Tool arguments for reading: a JSON string is parsed first (the Responses and Chat APIs send them as text)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value)
    return str(value) if isinstance(value, str) else pretty_json(value)


def _text(content: Any) -> str | None:
    """The readable text of a message's content: a string, or a list of parts (text / input_text / output_text /
    refusal / summary_text; an image or file part is named, not shown). None: not a content shape."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        if isinstance(content.get("text"), str):
            return str(content["text"])
        return None
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                kind = str(part.get("type", ""))
                if isinstance(part.get("text"), str):
                    parts.append(str(part["text"]))
                elif isinstance(part.get("refusal"), str):
                    parts.append(f"(refused) {part['refusal']}")
                elif kind:
                    parts.append(f"[{kind}]")
                else:
                    return None
            else:
                return None
        return "\n".join(parts)
    return None


def _responses_item(item: Mapping[str, Any]) -> Message | None:
    kind = item.get("type")
    if kind == "function_call" or kind == "custom_tool_call":
        return Message("assistant", tool_calls=(ToolCall(str(item.get("name", "")),
                                                         _arguments(item.get("arguments", item.get("input", ""))),
                                                         str(item.get("call_id", ""))),))
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        text = _text(output)
        return Message("tool", text=text if text is not None else pretty_json(output),
                       result_of=str(item.get("call_id", "")))
    if kind == "reasoning":
        summary = _text(item.get("summary") or [])
        content = _text(item.get("content") or [])
        return Message("reasoning", text="\n".join(t for t in (summary, content) if t) or "(no summary)")
    if kind == "message" or (kind is None and "role" in item and "content" in item):
        return None  # a message: read as a chat message below (the two share role + content)
    return None


def _chat_message(item: Mapping[str, Any]) -> Message | None:
    role = item.get("role")
    if role not in _CHAT_ROLES or ("content" not in item and "tool_calls" not in item):
        return None
    text = _text(item.get("content"))
    if text is None:
        return None
    calls = []
    for call in item.get("tool_calls") or []:
        if not isinstance(call, Mapping):
            return None
        inner = call.get("function")
        function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else call
        calls.append(ToolCall(str(function.get("name", "")),
                              _arguments(function.get("arguments", function.get("args", ""))), str(call.get("id", ""))))
    return Message("tool" if role == "function" else str(role), text=text, tool_calls=tuple(calls),
                   result_of=str(item.get("tool_call_id", "")), tool_name=str(item.get("name") or ""))


def _langchain_fields(item: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """A LangChain message's (type, fields) from `model_dump()`, `messages_to_dict()` or `dumpd()`."""
    if item.get("lc") == 1 and item.get("type") == "constructor" and isinstance(item.get("kwargs"), Mapping):
        ident = item.get("id")
        name = ident[-1] if isinstance(ident, list) and ident else ""
        kind = _LANGCHAIN_CLASSES.get(str(name)) or item["kwargs"].get("type")
        return (str(kind), item["kwargs"]) if kind in _LANGCHAIN_ROLES else None
    if item.get("type") in _LANGCHAIN_ROLES and isinstance(item.get("data"), Mapping):
        return str(item["type"]), item["data"]
    if item.get("type") in _LANGCHAIN_ROLES and "content" in item:
        return str(item["type"]), item
    return None


def _langchain_message(item: Mapping[str, Any]) -> Message | None:
    found = _langchain_fields(item)
    if found is None:
        return None
    kind, fields = found
    text = _text(fields.get("content"))
    if text is None:
        return None
    calls = tuple(ToolCall(str(call.get("name", "")), _arguments(call.get("args", {})), str(call.get("id") or ""))
                  for call in fields.get("tool_calls") or [] if isinstance(call, Mapping))
    role = str(fields.get("role")) if kind == "chat" and fields.get("role") else _LANGCHAIN_ROLES[kind]
    return Message(role, text=text, tool_calls=calls, result_of=str(fields.get("tool_call_id") or ""),
                   tool_name=str(fields.get("name") or "") if role == "tool" else "")


def _harness_item(item: Mapping[str, Any], role: str) -> Message | None:
    """The harness's own item content, `{"text": ...}` under the item's role (the API's and client's examples)."""
    if set(item) <= {"text", "name"} and isinstance(item.get("text"), str) and role:
        return Message(role, text=str(item["text"]))
    return None


def conversation_message(content: Any, *, role: str = "", seq: int | None = None) -> Message:
    """One stored item (a session item's content, or one message of a state's `messages`) as a message.

    `role` is the session item's own role, used when the content does not carry one. The readers are tried from the
    most specific shape to the least; the first that reads the whole item wins, and an item none reads is shown as
    its JSON (`known` False).
    """
    raw = pretty_json(content)
    message: Message | None = None
    if isinstance(content, str) and role:
        message = Message(role, text=content)
    elif isinstance(content, Mapping):
        message = (_responses_item(content) or _langchain_message(content) or _chat_message(content)
                   or _harness_item(content, role))
    if message is None:
        return Message(role or "item", raw=raw, known=False, seq=seq)
    return Message(message.role, message.text, message.tool_calls, message.result_of, message.tool_name, raw,
                   True, seq)


def conversation(items: Iterable[Any]) -> list[Message]:
    """Session items (anything with `content`, `role` and `seq`) as messages, in their order."""
    return [conversation_message(item.content, role=item.role, seq=item.seq) for item in items]


@dataclass(frozen=True)
class StateShown:
    messages: tuple[Message, ...]  # the state's `messages` channel, read as messages (empty: none, or not readable)
    rest: str  # the rest of the state, pretty, without LangGraph's `branch:to:<node>: null` markers
    raw: str  # the whole state as stored


def state_shown(state: Any) -> StateShown:
    """A checkpoint's state for the approval page: its conversation as messages, the rest as JSON.

    LangGraph writes a `branch:to:<node>` channel with a null value for each edge it took; they say nothing to a
    reviewer, so a null one is left out of what is shown (the raw state keeps it).
    """
    raw = pretty_json(state)
    if not isinstance(state, Mapping):
        return StateShown((), raw, raw)
    rest = {key: value for key, value in state.items() if not (str(key).startswith("branch:to:") and value is None)}
    messages: tuple[Message, ...] = ()
    if isinstance(rest.get("messages"), list):
        read = tuple(conversation_message(m) for m in rest["messages"])
        if read and all(m.known for m in read):
            messages = read
            rest.pop("messages")
    return StateShown(messages, pretty_json(rest) if rest else "", raw)

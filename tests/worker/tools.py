"""Python tools for the worker tests (settings.HARNESS_TOOL_ADAPTERS "python" entries): they count their calls.

`CALLS` records every call's key; `DONE` is what the tool did under each key, which `look_up` reports.
"""

from typing import Any

from worker.adapters import Lookup

CALLS: list[str] = []
DONE: dict[str, dict[str, Any]] = {}


def publish(arguments: Any, *, idempotency_key: str) -> dict[str, Any]:
    CALLS.append(idempotency_key)
    result = {"published": True, "chapter": arguments.get("chapter"), "url": f"/chapters/{arguments.get('chapter')}"}
    DONE[idempotency_key] = result
    return result


def look_up(*, idempotency_key: str) -> Lookup:
    if idempotency_key in DONE:
        return Lookup(found=True, result=DONE[idempotency_key])
    return Lookup(found=False)


def reset() -> None:
    CALLS.clear()
    DONE.clear()


def revise(*, task: Any, run: Any, node: str, artifacts: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    """A repair node (worker.repair): a new title, given the reviewer's rejection."""
    reason = context["rejection"]["reason"]
    return {"kind": "text", "node": node, "content": f"revised because: {reason}",
            "arguments": {"chapter": 3, "title": "The Keeper's Light"}}

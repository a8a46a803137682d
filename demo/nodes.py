"""The demo plan's node handlers (settings.HARNESS_NODE_HANDLERS with HARNESS_DEMO): outline, draft, summarize.

Deterministic and free of side effects, as a node handler must be; "publish" is the approved tool
call between draft and summarize (demo.tools.publish_chapter).
"""

from typing import Any

from harness.canonical import digest
from runs_app.models import Run, Task


def _text_artifact(node: str, content: str) -> dict[str, str]:
    return {"kind": "text", "node": node, "content": content, "sha256": digest(content)}


def _content(ref: Any) -> str:
    # A ref may be one of our text artifacts or a bare content address written by an agent.
    return ref.get("content", "") if isinstance(ref, dict) else str(ref or "")


def outline(*, task: Task, run: Run, node: str, artifacts: dict[str, Any], context: dict[str, Any]) -> dict[str, str]:
    return _text_artifact(node, f"Outline for: {task.objective}\n1. Arrival\n2. The storm\n3. The Lighthouse")


def draft(*, task: Task, run: Run, node: str, artifacts: dict[str, Any], context: dict[str, Any]) -> dict[str, str]:
    source = _content(artifacts.get("outline"))
    return _text_artifact(node, f"Draft of chapter 3, from an outline of {len(source)} characters.")


def summarize(*, task: Task, run: Run, node: str, artifacts: dict[str, Any], context: dict[str, Any]) -> dict[str, str]:
    publish = artifacts.get("publish")
    published = (publish.get("result") if isinstance(publish, dict) else None) or {}
    done = ", ".join(sorted(name for name in artifacts if name != node))
    return _text_artifact(
        node, f"Summary: {done} done; published {published.get('url', 'nothing')} ({published.get('publish_id', '-')})."
    )

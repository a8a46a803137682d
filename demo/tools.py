"""The demo's tool (settings.HARNESS_TOOL_ADAPTERS["publish_chapter"] with HARNESS_DEMO), a Python adapter."""

from typing import Any

from harness.canonical import digest


def publish_chapter(arguments: dict[str, Any], *, idempotency_key: str) -> dict[str, Any]:
    """The demo's 'external' action: a deterministic publish record, keyed by the idempotency key."""
    chapter = arguments.get("chapter")
    return {
        "published": True,
        "chapter": chapter,
        "title": arguments.get("title", ""),
        "url": f"/novelforge/chapters/{chapter}",
        "publish_id": digest(idempotency_key)[:12],
    }

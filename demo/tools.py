"""The demo's tool (settings.HARNESS_TOOL_ADAPTERS["publish_chapter"] with HARNESS_DEMO), a Python adapter."""

from typing import Any

from harness.canonical import digest

# publish_chapter's declared argument schema (the tool registry, issue 32), registered by `manage.py load_demo`:
# the approval page's edit form is typed from it, and an unknown argument ("colour") is refused.
PUBLISH_CHAPTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "publish_chapter",
    "properties": {
        "chapter": {"type": "integer", "minimum": 1, "description": "The chapter's number."},
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "channel": {"enum": ["web", "newsletter", "both"], "description": "Where it is published (default web)."},
        "notify_readers": {"type": "boolean", "description": "Tell the readers who follow the novel."},
    },
    "required": ["chapter", "title"],
    "additionalProperties": False,
}


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


# pay_royalties (demo.policies): the tool two editors must approve (the demo's quorum policy).
PAY_ROYALTIES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "pay_royalties",
    "properties": {
        "payee": {"type": "string", "minLength": 1, "maxLength": 120},
        "amount_eur": {"type": "integer", "minimum": 1, "maximum": 100_000, "description": "Whole euros."},
    },
    "required": ["payee", "amount_eur"],
    "additionalProperties": False,
}


def pay_royalties(arguments: dict[str, Any], *, idempotency_key: str) -> dict[str, Any]:
    """The demo's payment: a deterministic transfer record, keyed by the idempotency key (nothing leaves)."""
    return {"paid": True, "payee": arguments.get("payee", ""), "amount_eur": arguments.get("amount_eur"),
            "transfer_id": digest(idempotency_key)[:12]}

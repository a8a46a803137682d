"""Python client for the Harness Console agent API.

    from harness_client import HarnessClient
    client = HarnessClient()  # HARNESS_URL and HARNESS_TOKEN from the environment
    session = client.create_session(role="writer")
    client.append_items(session.id, [{"role": "user", "content": {"text": "hi"}}], expected_last_seq=0)

`AsyncHarnessClient` has the same methods, awaited. Errors are `HarnessError`s (`harness_client.errors`).
"""

from harness_client.client import VERSION, AsyncHarnessClient, HarnessClient
from harness_client.errors import (
    ApprovalWaitTimeout,
    AuthenticationError,
    ConflictError,
    HarnessError,
    NotFoundError,
    PermissionDenied,
    PushUnavailable,
    QuestionWaitTimeout,
    ServerError,
    TransportError,
    ValidationError,
)
from harness_client.models import (
    Approval,
    ApprovalPolicy,
    BulkResult,
    Checkpoint,
    ContextSnapshot,
    Effect,
    EffectDelivery,
    ErasureReport,
    Fork,
    Handoff,
    Item,
    ItemPopped,
    ItemsAppended,
    ItemsCleared,
    ItemsLatest,
    ItemsTrimmed,
    MemoryChain,
    MemoryConflict,
    MemoryRecord,
    MemoryWrite,
    NarrowedToken,
    NewItem,
    Page,
    Provenance,
    Question,
    Retention,
    RetentionDryRun,
    ReviewerGroup,
    Run,
    RunEvent,
    Session,
    StandingApproval,
    Task,
    ToolSchema,
    Webhook,
)
from harness_client.retry import RetryPolicy
from harness_client.usage import ModelPrice, RunStopped

__version__ = VERSION


def __getattr__(name: str) -> object:
    """`HarnessStore` and `MemoryHeld` (harness_client.langgraph_store) load LangGraph, an optional extra: imported
    on first use, so `import harness_client` needs none."""
    if name in ("HarnessStore", "MemoryHeld"):
        from harness_client import langgraph_store

        return getattr(langgraph_store, name)
    raise AttributeError(f"module 'harness_client' has no attribute {name!r}")

__all__ = [
    "Approval",
    "ApprovalWaitTimeout",
    "AsyncHarnessClient",
    "AuthenticationError",
    "BulkResult",
    "Checkpoint",
    "ConflictError",
    "ContextSnapshot",
    "Effect",
    "Handoff",
    "EffectDelivery",
    "ErasureReport",
    "Fork",
    "Retention",
    "RetentionDryRun",
    "HarnessClient",
    "HarnessError",
    "Item",
    "ItemPopped",
    "ItemsAppended",
    "ItemsCleared",
    "ItemsLatest",
    "ItemsTrimmed",
    "MemoryChain",
    "MemoryConflict",
    "MemoryRecord",
    "MemoryWrite",
    "ModelPrice",
    "NarrowedToken",
    "NewItem",
    "NotFoundError",
    "Page",
    "PermissionDenied",
    "PushUnavailable",
    "Provenance",
    "RetryPolicy",
    "Run",
    "RunEvent",
    "RunStopped",
    "ServerError",
    "Session",
    "Task",
    "ToolSchema",
    "ApprovalPolicy",
    "ReviewerGroup",
    "Question",
    "QuestionWaitTimeout",
    "StandingApproval",
    "Webhook",
    "TransportError",
    "ValidationError",
    "__version__",
]

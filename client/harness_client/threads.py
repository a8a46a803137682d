"""The shapes of the LangGraph thread endpoints (`/api/v1/threads/...`), which `harness_client.langgraph`'s
`HarnessSaver` is built on. Plain JSON in, plain JSON out: the saver decides how a channel's value is
encoded (JSON when it is JSON, the serializer's typed bytes otherwise)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

__all__ = ["PendingWrite", "ThreadCheckpoint", "ThreadCheckpointStored", "ThreadCopied", "ThreadDeleted",
           "ThreadPruned", "ThreadRun", "ThreadTtl"]

# (task_id, channel, value as stored, task_path, idx), in LangGraph's order (task_path, task_id, idx).
PendingWrite = tuple[str, str, Any, str, int]


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadCheckpoint:
    """One stored LangGraph checkpoint with its pending writes (values as stored: see HarnessSaver)."""

    id: int  # the harness checkpoint's id (/checkpoints/<id>/ in the console)
    run: int  # the thread's run
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    checkpoint: dict[str, Any]  # the LangGraph checkpoint without its channel values
    channel_values: dict[str, Any]
    metadata: dict[str, Any]
    content_hash: str
    pending_writes: list[PendingWrite]

    @classmethod
    def from_json(cls, body: Any) -> ThreadCheckpoint:
        return cls(
            id=body["id"], run=body["run"], thread_id=body["thread_id"], checkpoint_ns=body["checkpoint_ns"],
            checkpoint_id=body["checkpoint_id"], parent_checkpoint_id=body["parent_checkpoint_id"],
            checkpoint=body["checkpoint"], channel_values=body["channel_values"], metadata=body["metadata"],
            content_hash=body["content_hash"],
            pending_writes=[(w[0], w[1], w[2], w[3], w[4]) for w in body["pending_writes"]],
        )


def thread_checkpoints_from_json(body: Any) -> list[ThreadCheckpoint]:
    parse = ThreadCheckpoint.from_json
    return [parse(row) for row in body]


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadCheckpointStored:
    """The answer to a put: the harness checkpoint's id, its run and content hash."""

    id: int
    run: int
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    content_hash: str

    @classmethod
    def from_json(cls, body: Any) -> ThreadCheckpointStored:
        return cls(id=body["id"], run=body["run"], thread_id=body["thread_id"], checkpoint_ns=body["checkpoint_ns"],
                   checkpoint_id=body["checkpoint_id"], content_hash=body["content_hash"])


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadDeleted:
    """How many checkpoints and pending writes a thread's deletion removed."""

    checkpoints: int
    writes: int

    @classmethod
    def from_json(cls, body: Any) -> ThreadDeleted:
        return cls(checkpoints=body["checkpoints"], writes=body["writes"])


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadRun:
    """A thread's run and session (the console's /runs/<run>/)."""

    thread_id: str
    run: int
    session: int

    @classmethod
    def from_json(cls, body: Any) -> ThreadRun:
        return cls(thread_id=body["thread_id"], run=body["run"], session=body["session"])


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadCopied:
    """A thread copied to a new thread id: its run (a fork of `source_run`), and what it holds."""

    thread_id: str
    run: int
    source_run: int
    checkpoints: int
    writes: int

    @classmethod
    def from_json(cls, body: Any) -> ThreadCopied:
        return cls(thread_id=body["thread_id"], run=body["run"], source_run=body["source_run"],
                   checkpoints=body["checkpoints"], writes=body["writes"])


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadPruned:
    """What a prune (or a deletion by LangGraph run) removed; `kept`: the threads it skipped, each
    `{"thread_id": ..., "rule": <the retention keep rule>}`."""

    checkpoints: int
    writes: int
    kept: list[dict[str, str]]

    @classmethod
    def from_json(cls, body: Any) -> ThreadPruned:
        return cls(checkpoints=body["checkpoints"], writes=body["writes"], kept=list(body["kept"]))


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadTtl:
    """A thread's time to live: its own (None: its project's), its project's default, and when it expires (None:
    kept until someone deletes it)."""

    thread_id: str
    run: int
    ttl_days: int | None
    project_ttl_days: int | None
    expires_at: dt.datetime | None

    @classmethod
    def from_json(cls, body: Any) -> ThreadTtl:
        expires = body.get("expires_at")
        return cls(thread_id=body["thread_id"], run=body["run"], ttl_days=body["ttl_days"],
                   project_ttl_days=body["project_ttl_days"],
                   expires_at=dt.datetime.fromisoformat(expires) if expires else None)

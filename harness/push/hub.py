"""One LISTEN connection per process, fanned out to the waiters in memory.

A waiter registers the rows it waits on (`watch`) *before* it reads them, and clears its event before each read:
a NOTIFY that lands between a read and the wait sets the event, so the wait returns at once and reads again. The
hub never decides anything from a payload: it only says "look again". When the connection is lost, it reconnects
and wakes every waiter (a NOTIFY sent while nobody listened is gone; the re-read finds what it said). While it is
not listening, `listening` is False and the routes re-read every `UNLISTENED_RECHECK` seconds instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg
from django.db import connections

log = logging.getLogger("harness.push")

CHANNEL = "harness_push"
RECONNECT_DELAYS = (0.1, 0.5, 1.0, 2.0, 5.0)  # then 5 s between attempts
UNLISTENED_RECHECK = 1.0

Key = tuple[str, int]  # ("approval" | "run", id)


@dataclass(frozen=True)
class Change:
    """One NOTIFY's payload: `kind project id status`, ids only."""

    kind: str
    project: int
    id: int
    status: str

    @classmethod
    def parse(cls, payload: str) -> Change | None:
        parts = payload.split(" ")
        if len(parts) != 4 or not parts[1].isdigit() or not parts[2].isdigit():
            return None
        return cls(parts[0], int(parts[1]), int(parts[2]), parts[3])


@dataclass(eq=False)
class Waiter:
    """The rows one wait watches; `event` is set when any of them may have changed."""

    keys: set[Key] = field(default_factory=set)
    event: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(eq=False)
class Stream:
    """A desk page's stream: the changes of its user's projects, queued (None: resynchronise, reread all)."""

    projects: frozenset[int]
    queue: asyncio.Queue[Change | None] = field(default_factory=lambda: asyncio.Queue(maxsize=256))


def conninfo() -> dict[str, Any]:
    """The default database's libpq parameters, as Django connects (less the Python-side options)."""
    params = connections["default"].get_connection_params()
    for python_only in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(python_only, None)
    return params


class PushHub:
    def __init__(self) -> None:
        self.waiters: dict[Key, set[Waiter]] = {}
        self.streams: set[Stream] = set()
        self.listening = False
        self.connects = 0  # LISTEN connections opened: more than one means it reconnected
        self._task: asyncio.Task[None] | None = None
        self._listening_now = asyncio.Event()  # bound to no loop until awaited (the server's)

    # --- the waiters' side ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def watch(self, *keys: Key) -> Iterator[Waiter]:
        waiter = Waiter()
        for key in keys:
            self.add(waiter, key)
        try:
            yield waiter
        finally:
            for key in waiter.keys:
                watching = self.waiters.get(key)
                if watching is not None:
                    watching.discard(waiter)
                    if not watching:
                        del self.waiters[key]

    def add(self, waiter: Waiter, key: Key) -> None:
        waiter.keys.add(key)
        self.waiters.setdefault(key, set()).add(waiter)

    @contextlib.contextmanager
    def stream(self, projects: frozenset[int]) -> Iterator[Stream]:
        stream = Stream(projects)
        self.streams.add(stream)
        try:
            yield stream
        finally:
            self.streams.discard(stream)

    async def start(self, wait: float = 2.0) -> None:
        """Start listening (once per process, in its event loop); wait up to `wait` s for the LISTEN to hold, so
        a first waiter does not miss the decision made right after it asked. A database that does not answer
        leaves the hub retrying in the background and the routes re-reading on their own clock."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._listen(), name="harness-push-listen")
        if not self.listening:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._listening_now.wait(), wait)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
            self.listening = False

    # --- the listener ----------------------------------------------------------------------------------

    def dispatch(self, change: Change) -> None:
        for waiter in self.waiters.get((change.kind, change.id), ()):
            waiter.event.set()
        for stream in self.streams:
            if change.project in stream.projects:
                _offer(stream, change)

    def wake_all(self) -> None:
        for watching in self.waiters.values():
            for waiter in watching:
                waiter.event.set()
        for stream in self.streams:
            _offer(stream, None)

    async def _listen(self) -> None:
        attempt = 0
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(**conninfo(), autocommit=True) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    self.connects += 1
                    self.listening, attempt = True, 0
                    self._listening_now.set()
                    # What was sent while nobody listened is lost: every waiter reads again.
                    self.wake_all()
                    async for notify in conn.notifies():
                        change = Change.parse(notify.payload)
                        if change is not None:
                            self.dispatch(change)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure of the connection: reconnect, keep serving
                log.warning("push: LISTEN connection lost (%s: %s); reconnecting", type(exc).__name__, exc)
            self.listening = False
            self._listening_now.clear()
            self.wake_all()  # they fall back to re-reading on their own clock until the hub listens again
            await asyncio.sleep(RECONNECT_DELAYS[min(attempt, len(RECONNECT_DELAYS) - 1)])
            attempt += 1


def _offer(stream: Stream, change: Change | None) -> None:
    try:
        stream.queue.put_nowait(change)
    except asyncio.QueueFull:  # a stalled page: tell it to reread everything instead of queueing more
        with contextlib.suppress(asyncio.QueueEmpty):
            while True:
                stream.queue.get_nowait()
        stream.queue.put_nowait(None)

from typing import Any

import pytest

from notify_app import tasks


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, tuple[Any, ...]]]:  # type: ignore[no-untyped-def]
    """The tasks the receivers queued (instead of the broker), to run them here with `.apply()`."""
    queued: list[tuple[str, tuple[Any, ...]]] = []
    monkeypatch.setattr(tasks, "enqueue", lambda task, *args: queued.append((task.name, args)))
    return queued

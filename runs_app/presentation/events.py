"""A run's events as the console's pages list them: each row with its data written out as compact JSON (a
template would print a dict's repr), beside the row rather than set on it."""

import json
from collections.abc import Sequence
from dataclasses import dataclass

from runs_app.models import RunEvent


@dataclass(frozen=True)
class EventShown:
    event: RunEvent
    data_json: str  # the event's data as compact JSON text (the template escapes it)


def events_shown(events: Sequence[RunEvent]) -> list[EventShown]:
    return [EventShown(event, json.dumps(event.data, sort_keys=True, ensure_ascii=False, default=str))
            for event in events]

"""The run inspector's `snapshots` panel (registered with runs_app.inspector_panels in memory_app.apps): what
memory's context projection handed the model for the run, each snapshot beside its content as JSON text and the
manifest's "why did the model see this" in words."""

import json
from dataclasses import dataclass

from memory_app.context import RULES
from memory_app.models import ContextSnapshot
from memory_app.selectors import run_context_snapshots
from runs_app.models import Run


@dataclass(frozen=True)
class SnapshotShown:
    snapshot: ContextSnapshot
    content_json: str  # the content handed to the model, as indented JSON text
    why: list[str]  # each entry with its rule's sentence, then what was left out and why


def _why(snapshot: ContextSnapshot) -> list[str]:
    manifest = snapshot.manifest or {}
    return [
        f"{e.get('kind')} {e.get('seq', e.get('id', e.get('handoff', '')))}: "
        f"{RULES.get(e.get('rule'), e.get('rule'))}"
        for e in manifest.get("entries", [])
    ] + [f"left out: {o.get('kind')}{' x' + str(o['count']) if 'count' in o else ''}: {o.get('why')}"
         for o in manifest.get("left_out", [])]


def snapshots_panel(run: Run) -> list[SnapshotShown]:
    return [SnapshotShown(s, json.dumps(s.content, indent=2, ensure_ascii=False, default=str), _why(s))
            for s in run_context_snapshots(run)]

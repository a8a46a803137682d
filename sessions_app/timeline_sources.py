"""What a session's console timeline shows beside its items, registered by the apps above sessions_app.

runs_app depends on sessions_app, never the reverse (tests/test_architecture.py), yet a session's timeline
interleaves its runs with its items: runs_app registers its runs here in its AppConfig.ready (runs_app.apps), and
the timeline (sessions_app.selectors.session_timeline) merges every registered source with the items in one UNION.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet

if TYPE_CHECKING:
    from sessions_app.models import Session


@dataclass(frozen=True)
class TimelineSource:
    kind: str  # the entries' kind (sessions_app.selectors.TimelineEntry), the template's branch
    rows: Callable[["Session"], QuerySet[Any]]  # the session's rows, sought by (created_at, id)
    fetch: Callable[[Sequence[int]], dict[int, Any]]  # the window's rows by id, as the page shows them


_sources: dict[str, TimelineSource] = {}


def timeline_source_register(source: TimelineSource) -> None:
    """Register (or replace, for a reloaded app) the source of its kind."""
    _sources[source.kind] = source


def timeline_sources() -> tuple[TimelineSource, ...]:
    return tuple(_sources.values())

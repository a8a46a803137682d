"""What the apps above runs_app add to the run inspector's page, without runs_app importing them.

runs_app sits below memory_app (tests/test_architecture.py: no arrow back up between apps), yet the inspector shows
what memory's context projection handed the model for the run. The app that owns a panel registers a function of
the run in its AppConfig.ready (memory_app.apps: `snapshots`); the inspector's view adds what each returns to the
page's context under its name, and the template shows the panel when it is there.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runs_app.models import Run

Panel = Callable[["Run"], Any]
_panels: dict[str, Panel] = {}


def panel_register(name: str, panel: Panel) -> None:
    """Register (or replace, for a reloaded app) the panel `name`: its value in the inspector's context."""
    _panels[name] = panel


def panels(run: "Run") -> dict[str, Any]:
    return {name: panel(run) for name, panel in _panels.items()}

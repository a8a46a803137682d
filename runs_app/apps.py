from typing import Any

from django.apps import AppConfig

from sessions_app.signals import session_awaiting_user
from sessions_app.timeline_sources import TimelineSource, timeline_source_register


class RunsAppConfig(AppConfig):
    name = "runs_app"
    verbose_name = "Runs"

    def ready(self) -> None:
        # sessions_app cannot import runs_app (the house's import direction), so a session that starts waiting
        # for its user announces it and the runs app answers, in the same transaction.
        session_awaiting_user.connect(_checkpoint_running_run, dispatch_uid="runs_app.session_awaiting_user")
        # For the same reason a session's console timeline gets its runs from here (sessions_app.timeline_sources).
        from runs_app.models import Run

        timeline_source_register(TimelineSource(
            "run", lambda session: Run.objects.filter(session=session),
            lambda ids: Run.objects.select_related("task").in_bulk(ids)))


def _checkpoint_running_run(sender: Any, *, project_id: int, session: Any, **_: Any) -> None:
    # Imported here: services import models, which are not loaded when this module is.
    from runs_app.services.checkpoints import checkpoint_session_awaiting_user

    checkpoint_session_awaiting_user(project=project_id, session_id=session.pk)

"""Reads of handoffs: the API's list and one (a receiver's token sees only its own), a run's handoffs.

Every read a door makes takes `project_ids`, the ids of the projects the caller may see (the API's
`harness.http.api_base.scope`, the console's `harness.http.views.project_ids`), and starts from the model's
`for_projects`: another project's object is simply absent (NotFoundError: a 404 at every door).
"""

from collections.abc import Sequence

from django.db.models import Q, QuerySet

from harness.http.errors import NotFoundError
from runs_app.models import Handoff, Run


def handoff_list(*, project_ids: Sequence[int]) -> QuerySet[Handoff]:
    return Handoff.objects.for_projects(project_ids).select_related("project")


def handoff_get(*, project_ids: Sequence[int], handoff_id: int, receiver_token_id: int | None = None) -> Handoff:
    """One handoff in the caller's projects; for a handoff receiver's token (`receiver_token_id`), only the
    handoff it was issued for: any other is absent to it (404), as another project's is."""
    handoffs = handoff_list(project_ids=project_ids)
    if receiver_token_id is not None:
        handoffs = handoffs.filter(receiver_token_id=receiver_token_id)
    handoff = handoffs.select_related("origin_run", "receiver_session", "receiver_run").filter(pk=handoff_id).first()
    if handoff is None:
        raise NotFoundError(f"Handoff {handoff_id} does not exist.")
    return handoff


def run_handoffs(run: Run, limit: int = 200) -> list[Handoff]:
    """The handoffs the run issued and the one it works on as a receiver, newest first (the run inspector)."""
    mine = Handoff.objects.filter(project_id=run.project_id).filter(Q(origin_run=run) | Q(receiver_run=run))
    return list(mine.select_related("receiver_session").order_by("-created_at", "-id")[:limit])

"""Reads of external effects: the API's list and one, an effect's console page, a run's effects.

Every read a door makes takes `project_ids`, the ids of the projects the caller may see (the API's
`harness.http.api_base.scope`, the console's `harness.http.views.project_ids`), and starts from the model's
`for_projects`: another project's object is simply absent (NotFoundError: a 404 at every door).
"""

from collections.abc import Sequence

from django.db.models import QuerySet

from harness.http.errors import NotFoundError
from runs_app.models import ExternalEffect, Run


def effect_list(*, project_ids: Sequence[int]) -> QuerySet[ExternalEffect]:
    return ExternalEffect.objects.for_projects(project_ids)


def effect_get(*, project_ids: Sequence[int], effect_id: int) -> ExternalEffect:
    effect = effect_list(project_ids=project_ids).filter(pk=effect_id).first()
    if effect is None:
        raise NotFoundError(f"Effect {effect_id} does not exist.")
    return effect


def effect_detail(*, project_ids: Sequence[int], effect_id: int) -> ExternalEffect:
    """An effect for its console page, with its run and approval (one query)."""
    effect = (ExternalEffect.objects.for_projects(project_ids).select_related("project", "run", "approval")
              .filter(pk=effect_id).first())
    if effect is None:
        raise NotFoundError(f"Effect {effect_id} does not exist.")
    return effect


def run_effects(run: Run, limit: int = 200) -> list[ExternalEffect]:
    return list(ExternalEffect.objects.filter(run=run).order_by("-created_at", "-id")[:limit])

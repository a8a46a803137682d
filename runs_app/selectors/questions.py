"""Reads of questions to people (issue 33), scoped to the caller's projects like every read."""

from collections.abc import Sequence

from django.db.models import QuerySet

from runs_app.models import HumanQuestion


def question_list(*, project_ids: Sequence[int], status: str = "", run: int | None = None
                  ) -> QuerySet[HumanQuestion]:
    questions = (HumanQuestion.objects.for_projects(project_ids)
                 .select_related("project", "answered_by", "routed_group").order_by("-created_at", "-id"))
    if status:
        questions = questions.filter(status=status)
    if run is not None:
        questions = questions.filter(run_id=run)
    return questions


def question_get(*, project_ids: Sequence[int], question_id: int) -> HumanQuestion | None:
    return question_list(project_ids=project_ids).filter(pk=question_id).first()


def pending_questions(*, project_ids: Sequence[int]) -> QuerySet[HumanQuestion]:
    """The inbox's: pending questions, oldest first (the partial index question_pending_inbox)."""
    return (HumanQuestion.objects.for_projects(project_ids).filter(status="pending")
            .select_related("project", "routed_group").order_by("created_at", "id"))

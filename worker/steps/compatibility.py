"""Step `compatibility`: the checkpoint and task were written in a schema, a plan version and a framework
version (settings.HARNESS_FRAMEWORK_VERSION: the plan's handlers and tools) this worker understands."""

import logging
from typing import Any

from django.conf import settings

from runs_app.models import (
    FailureCategory,
    ResumePolicy,
)
from worker.state import Resume, StepFailed

log = logging.getLogger(__name__)


SUPPORTED_SCHEMA_VERSIONS = frozenset({1})


def run(r: Resume) -> dict[str, Any]:
    """The checkpoint and task were written in a schema this worker understands, for the current plan."""
    checkpoint, task = r.checkpoint, r.task
    if checkpoint is not None:
        if checkpoint.schema_version not in SUPPORTED_SCHEMA_VERSIONS:
            raise StepFailed(f"checkpoint schema_version {checkpoint.schema_version} is not supported "
                             f"(supported: {sorted(SUPPORTED_SCHEMA_VERSIONS)})")
        if checkpoint.resume_policy == ResumePolicy.MANUAL:
            raise StepFailed("the checkpoint's resume policy is manual: a person decides")
        recorded_framework = (checkpoint.state or {}).get("framework_version")
        if recorded_framework is not None and _major(recorded_framework) != _major(settings.HARNESS_FRAMEWORK_VERSION):
            raise StepFailed(f"the checkpoint was taken under framework version {recorded_framework}, this worker "
                             f"runs {settings.HARNESS_FRAMEWORK_VERSION}: a person decides whether it still holds",
                             category=FailureCategory.SEMANTIC)
    if task is not None:
        if task.schema_version not in SUPPORTED_SCHEMA_VERSIONS:
            raise StepFailed(f"task schema_version {task.schema_version} is not supported")
        recorded = (checkpoint.state or {}).get("plan_version") if checkpoint is not None else None
        if recorded is not None and recorded != task.plan_version:
            raise StepFailed(f"stale checkpoint: it was taken at plan_version {recorded}, "
                             f"the task is at plan_version {task.plan_version}")
    return {"checkpoint_schema": checkpoint.schema_version if checkpoint else None,
            "task_schema": task.schema_version if task else None,
            "framework_version": settings.HARNESS_FRAMEWORK_VERSION}


def _major(version: object) -> str:
    return str(version).split(".", 1)[0]

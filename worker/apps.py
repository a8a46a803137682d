from django.apps import AppConfig


class WorkerConfig(AppConfig):
    name = "worker"
    verbose_name = "Resume worker"

    def ready(self) -> None:
        from runs_app.resume import dry_runner_register
        from worker import tasks  # noqa: F401 - connects the resume request and the worker's start check
        from worker.dry_run import resume_dry_run

        # The approval page (runs_app.views.approvals) shows the resume's dry run, which is the worker's own checks;
        # runs_app sits below the worker and cannot import it (tests/test_architecture.py), so the worker hands it down.
        dry_runner_register(lambda approval, reviewer_id, holds_role: resume_dry_run(
            approval, reviewer_id=reviewer_id, reviewer_holds_role=holds_role))

from django.apps import AppConfig


class WorkerConfig(AppConfig):
    name = "worker"
    verbose_name = "Resume worker"

    def ready(self) -> None:
        from worker import tasks  # noqa: F401 - connects the resume request and the worker's start check

from django.apps import AppConfig


class MemoryAppConfig(AppConfig):
    name = "memory_app"
    verbose_name = "Memory"

    def ready(self) -> None:
        # runs_app sits below memory_app and cannot import it (tests/test_architecture.py): the run inspector shows
        # what memory's context projection handed the model through a panel memory registers.
        from memory_app.selectors import run_context_snapshots
        from runs_app.inspector_panels import panel_register

        panel_register("snapshots", run_context_snapshots)

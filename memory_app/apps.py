from django.apps import AppConfig


class MemoryAppConfig(AppConfig):
    name = "memory_app"
    verbose_name = "Memory"

    def ready(self) -> None:
        # runs_app sits below memory_app and cannot import it (tests/test_architecture.py): the run inspector shows
        # what memory's context projection handed the model through a panel memory registers.
        from memory_app.inspector_panel import snapshots_panel
        from runs_app.inspector_panels import panel_register

        panel_register("snapshots", snapshots_panel)

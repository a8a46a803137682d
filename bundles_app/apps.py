from django.apps import AppConfig


class BundlesAppConfig(AppConfig):
    name = "bundles_app"
    verbose_name = "Run bundles"

    def ready(self) -> None:
        # runs_app cannot import bundles_app (tests/test_architecture.py): the inspector's "imported from" mark and
        # export button are a panel this app registers.
        from bundles_app.panel import bundle_panel
        from runs_app.inspector_panels import panel_register

        panel_register("bundle", bundle_panel)

from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo (HARNESS_DEMO=1 only): `load_demo`, the publish_chapter tool, the demo plan's nodes; no models."""

    name = "demo"
    verbose_name = "Demo"

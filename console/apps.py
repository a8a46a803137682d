from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """The console's own pages (dashboard, login, logout) and its navigation counts; no models."""

    name = "console"
    verbose_name = "Console"

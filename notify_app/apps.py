from django.apps import AppConfig


class NotifyAppConfig(AppConfig):
    name = "notify_app"
    verbose_name = "Notifications"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from notify_app import receivers  # noqa: F401 - connects to runs_app.signals

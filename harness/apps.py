from django.apps import AppConfig


class HarnessConfig(AppConfig):
    name = "harness"
    verbose_name = "Harness kernel"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from harness.fields import register_text_json_loader

        # json columns (harness.fields.TextJSONField) read as their text, as Django reads jsonb.
        connection_created.connect(register_text_json_loader, dispatch_uid="harness.fields.text_json")

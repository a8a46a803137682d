from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class HarnessAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the admin role's site (harness.admin_helpers.HarnessAdminSite)."""

    default = False  # "harness" in INSTALLED_APPS is HarnessConfig; this one is named in full
    default_site = "harness.admin_helpers.HarnessAdminSite"


class HarnessConfig(AppConfig):
    default = True
    name = "harness"
    verbose_name = "Harness kernel"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from harness.fields import register_text_json_loader

        # json columns (harness.fields.TextJSONField) read as their text, as Django reads jsonb.
        connection_created.connect(register_text_json_loader, dispatch_uid="harness.fields.text_json")

from django.apps import AppConfig


class BundlesAppConfig(AppConfig):
    name = "bundles_app"
    verbose_name = "Run bundles"

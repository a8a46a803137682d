"""WSGI entry point (granian, gunicorn): Django's handler with the agent API's shorter middleware chain."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)

from harness.http.handlers import HarnessWSGIHandler  # noqa: E402 - needs the settings configured
from harness.ops.tracing import tracing_configure  # noqa: E402

tracing_configure()  # only with OTEL_EXPORTER_OTLP_ENDPOINT set; before the handler builds its chains
application = HarnessWSGIHandler()

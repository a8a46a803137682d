"""The wiring: settings, URLconfs, WSGI/ASGI entry points, the Celery app, the server's config.

Nothing in the apps or the kernel imports this package (tests/test_architecture.py); it names them. Importing it
builds the Celery app, as Django's settings module is imported, so every process that sends a task has it.
"""

from config.celery import app as celery_app

__all__ = ["celery_app"]

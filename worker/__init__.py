"""The resume worker: Celery tasks, the resume pipeline (one module per step, worker.registry), the
lease, recovery, worker-driven plans and tool adapters. A Django app with no models."""

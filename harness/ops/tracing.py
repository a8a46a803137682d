"""OpenTelemetry traces: Django, Celery, psycopg and the tool calls' HTTP (requests), one trace from a request
to the worker's work it queued (the Celery instrumentation carries the context in the message's headers).

Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: then spans go over OTLP/HTTP in batches (the standard OTEL_*
variables configure the exporter: headers, timeout, OTEL_SERVICE_NAME). Off, nothing is instrumented and
nothing is imported, so the hot path pays nothing. The web process configures it when config.wsgi loads (after
gunicorn's or granian's fork), the worker in each pool process (config.celery: a batch exporter's thread does
not survive a fork). A test passes its own exporter (tests/ops/test_tracing.py).
"""

from typing import Any

from django.conf import settings

from harness.env import env_str

DJANGO_MIDDLEWARE = "opentelemetry.instrumentation.django.middleware.otel_middleware._DjangoMiddleware"
_instrumentors: list[Any] = []


def tracing_configure(*, exporter: Any = None) -> bool:
    """Instrument everything once, exporting to `exporter` (SimpleSpanProcessor) or, with none given, to the
    OTLP endpoint (BatchSpanProcessor). Returns whether tracing is on."""
    if _instrumentors:
        return True
    if exporter is None and not env_str("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return False
    from opentelemetry import trace
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.requests import RequestsInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create(
        {"service.name": env_str("OTEL_SERVICE_NAME")}))
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
    else:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    # Django's instrumentation adds its middleware to settings.MIDDLEWARE; the agent API's chain
    # (harness.http.handlers) is another list and gets it too, first, before either chain is built.
    django = DjangoInstrumentor()
    django.instrument(tracer_provider=provider)
    settings.API_MIDDLEWARE = [DJANGO_MIDDLEWARE, *[m for m in settings.API_MIDDLEWARE if m != DJANGO_MIDDLEWARE]]
    for instrumentor in (CeleryInstrumentor(), PsycopgInstrumentor(), RequestsInstrumentor()):  # type: ignore[no-untyped-call]
        instrumentor.instrument(tracer_provider=provider)
        _instrumentors.append(instrumentor)
    _instrumentors.append(django)
    _instrumentors.append(_DjangoQueries(provider.get_tracer("harness.db")))
    return True


class _DjangoQueries:
    """A span per statement Django runs (the ORM's and harness.db's prepared ones alike). psycopg's own
    instrumentation sees only connections whose cursor class it chose, and Django sets its own on each
    connection it opens; Django's execute wrappers see every statement. The span carries the statement's
    text with its placeholders, never the parameters (they may hold memory content)."""

    def __init__(self, tracer: Any) -> None:
        from django.db import connections
        from django.db.backends.signals import connection_created

        self.tracer = tracer
        connection_created.connect(self._wrap, dispatch_uid="harness.ops.tracing.queries")
        for connection in connections.all(initialized_only=True):
            self._wrap(connection=connection)

    def _wrap(self, sender: Any = None, connection: Any = None, **kwargs: Any) -> None:
        if self.execute not in connection.execute_wrappers:
            connection.execute_wrappers.append(self.execute)

    def execute(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        from opentelemetry.trace import SpanKind

        statement = str(sql)
        name = statement.split(None, 1)[0].upper() if statement.strip() else "SQL"
        with self.tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes={
                "db.system": "postgresql", "db.name": str(context["connection"].settings_dict.get("NAME", "")),
                "db.statement": statement[:2000]}):
            return execute(sql, params, many, context)

    def uninstrument(self) -> None:
        from django.db import connections
        from django.db.backends.signals import connection_created

        connection_created.disconnect(dispatch_uid="harness.ops.tracing.queries")
        for connection in connections.all(initialized_only=True):
            if self.execute in connection.execute_wrappers:
                connection.execute_wrappers.remove(self.execute)


def tracing_unconfigure() -> None:
    """Undo `tracing_configure` (for a test: the rest of the suite runs untraced)."""
    while _instrumentors:
        _instrumentors.pop().uninstrument()
    settings.API_MIDDLEWARE = [m for m in settings.API_MIDDLEWARE if m != DJANGO_MIDDLEWARE]

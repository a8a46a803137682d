"""Memory's state as a Prometheus gauge, read when /metrics is scraped (harness.ops.metrics)."""

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from memory_app.models import MemoryRecord, MemoryStatus


class MemoryStateCollector:
    def collect(self) -> Iterator[Metric]:
        held = GaugeMetricFamily("harness_memory_held_for_review", "Memory records held for an operator's review.")
        held.add_metric([], MemoryRecord.objects.filter(status=MemoryStatus.HELD).count())
        yield held

"""The runs' state as Prometheus gauges, read when /metrics is scraped (harness.ops.metrics): every project's rows,
a few aggregate queries, never on a request's path."""

import datetime as dt
from collections.abc import Iterator

from django.db.models import Count, Q
from django.db.models.functions import Now
from prometheus_client.core import GaugeMetricFamily, Metric

from runs_app.models import ApprovalRequest, ApprovalStatus, EffectStatus, ExternalEffect, Run, RunStatus

# Upper bounds of the age buckets of pending approvals, oldest last; an approval older than the last is "older".
APPROVAL_AGE_BUCKETS = (("5m", dt.timedelta(minutes=5)), ("1h", dt.timedelta(hours=1)),
                        ("1d", dt.timedelta(days=1)), ("7d", dt.timedelta(days=7)))


class RunStateCollector:
    def collect(self) -> Iterator[Metric]:
        yield self._pending_approvals()
        blocked = GaugeMetricFamily("harness_runs_blocked", "Runs blocked, by the resume step that blocked them.",
                                    labels=["step"])
        for row in Run.objects.filter(status=RunStatus.BLOCKED).values("blocked_step").annotate(n=Count("id")):
            blocked.add_metric([row["blocked_step"] or "unknown"], row["n"])
        yield blocked
        effects = GaugeMetricFamily("harness_effects", "External effects by state (conflict and unknown need a "
                                    "person).", labels=["state"])
        counts = dict(ExternalEffect.objects.values_list("status").annotate(n=Count("id")).order_by())
        for state in EffectStatus.values:
            effects.add_metric([state], counts.get(state, 0))
        yield effects

    def _pending_approvals(self) -> GaugeMetricFamily:
        """Counted in one statement: each bucket is "younger than its bound and not a younger bucket"."""
        family = GaugeMetricFamily("harness_approvals_pending", "Pending approvals by age (`le`: younger than).",
                                   labels=["age"])
        filters: dict[str, Count] = {}
        previous: dt.timedelta | None = None
        for name, bound in APPROVAL_AGE_BUCKETS:
            newer = Q(created_at__gt=Now() - bound)
            filters[name] = Count("id", filter=newer if previous is None else newer & Q(
                created_at__lte=Now() - previous))
            previous = bound
        filters["older"] = Count("id", filter=Q(created_at__lte=Now() - APPROVAL_AGE_BUCKETS[-1][1]))
        counts = ApprovalRequest.objects.filter(status=ApprovalStatus.PENDING).aggregate(**filters)
        for name, value in counts.items():
            family.add_metric([name], value)
        return family

"""The console's webhook page: the project's webhooks and the delivery log, every attempt with its answer."""

import json

from django.core.paginator import Paginator
from django.http import HttpResponse
from django.views.decorators.http import require_GET

from harness.http.views import ConsoleRequest, console_page, project_ids, render_page
from notify_app import selectors as sel
from notify_app.models import DeliveryStatus


@require_GET
@console_page
def delivery_log(request: ConsoleRequest) -> HttpResponse:
    ids = project_ids(request)
    deliveries = sel.delivery_log(project_ids=ids)
    status = request.GET.get("status", "")
    if status in DeliveryStatus.values:
        deliveries = deliveries.filter(status=status)
    page = Paginator(deliveries, 50).get_page(request.GET.get("page"))
    rows = [(delivery, json.dumps(delivery.payload, indent=2, sort_keys=True, ensure_ascii=False))
            for delivery in page.object_list]
    context = {"webhooks": sel.webhook_list(project_ids=ids), "page": page, "rows": rows, "status": status,
               "statuses": DeliveryStatus.values, "query": f"status={status}" if status else ""}
    return render_page(request, "notify/delivery_log.html", context, partials=("delivery-table",))

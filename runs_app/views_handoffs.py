"""The console's handoff page: the packet, its status, the result, the independence checks and the origin run."""

from django.http import HttpResponse
from django.views.decorators.http import require_GET

from harness.views import ConsoleRequest, console_page, project_ids, render_page
from runs_app import selectors as sel
from runs_app.views import pretty


@require_GET
@console_page
def handoff_detail(request: ConsoleRequest, handoff_id: int) -> HttpResponse:
    handoff = sel.handoff_get(project_ids=project_ids(request), handoff_id=handoff_id)
    packet = handoff.packet or {}
    return render_page(request, "runs/handoff_detail.html", {
        "handoff": handoff,
        "objective": packet.get("objective", ""),
        "inputs": packet.get("inputs", []),
        "capabilities": packet.get("allowed_capabilities", []),
        "schema_pretty": pretty(packet.get("output_schema")),
        "origin_cursor_pretty": pretty((packet.get("origin") or {}).get("cursor")),
        "result_pretty": pretty(handoff.result) if handoff.result_hash else "",
        "checks": (handoff.independence or {}).get("checks", []),
    })

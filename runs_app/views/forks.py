"""The checkpoint page and its "fork from here" form (runs_app.services.forks, the API's service).

The form posts twice: first without `confirm`, which changes nothing and shows the diff between the checkpoint's
state and the edited one; then, from that preview, with `confirm`, which forks and opens the new run.
"""

import json
from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from harness.actors import Actor
from harness.http.errors import DomainError
from harness.http.views import (
    ConsoleRequest,
    console_page,
    project_ids,
    project_roles,
    render_page,
    require_project_role,
    role_required,
)
from harness.tenancy import Role
from runs_app.forms import ForkForm
from runs_app.models import Checkpoint
from runs_app.presentation.json_text import pretty
from runs_app.selectors import checkpoints as checkpoints_sel
from runs_app.services import checkpoint_fork, state_diff


def diff_lines(diff: dict[str, Any]) -> list[tuple[str, str]]:
    """The diff as (kind, text) lines for the page: + added, - removed, ~ changed."""
    lines = [("added", f"+ {path}: {json.dumps(value, ensure_ascii=False)}") for path, value in diff["added"].items()]
    lines += [("removed", f"- {path}: {json.dumps(value, ensure_ascii=False)}")
              for path, value in diff["removed"].items()]
    lines += [("changed", f"~ {path}: {json.dumps(change['from'], ensure_ascii=False)} → "
                          f"{json.dumps(change['to'], ensure_ascii=False)}")
              for path, change in diff["changed"].items()]
    return lines


def checkpoint_page(request: ConsoleRequest, checkpoint: Checkpoint, *, status: int = 200,
                    fork_form: ForkForm | None = None, preview: list[tuple[str, str]] | None = None,
                    fork_error: str = "") -> HttpResponse:
    context = {
        "checkpoint": checkpoint,
        "roles": project_roles(request, checkpoint.project_id),
        "cursor_pretty": pretty(checkpoint.cursor),
        "state_pretty": pretty(checkpoint.state),
        "fingerprints_pretty": pretty(checkpoint.artifact_fingerprints),
        "gate_pretty": pretty(checkpoint.pending_gate) if checkpoint.pending_gate is not None else "",
        "metadata_pretty": pretty(checkpoint.metadata) if checkpoint.external_id else "",  # a LangGraph one
        # Its children: the next checkpoint of its run, and any fork (a child in another run) or LangGraph sibling.
        "children": list(checkpoints_sel.checkpoint_children(project_ids=project_ids(request), checkpoint=checkpoint)),
        "fork_form": fork_form or ForkForm(initial={"state": pretty(checkpoint.state)}),
        "fork_preview": preview,
        "fork_error": fork_error,
    }
    return render_page(request, "runs/checkpoint_detail.html", context, status=status)


@require_POST
@console_page
@role_required(Role.OPERATOR)
def checkpoint_fork_view(request: ConsoleRequest, checkpoint_id: int) -> HttpResponse:
    checkpoint = checkpoints_sel.checkpoint_detail(project_ids=project_ids(request), checkpoint_id=checkpoint_id)
    require_project_role(request, Role.OPERATOR, checkpoint.project_id)
    form = ForkForm(request.POST)
    if not form.is_valid():
        return checkpoint_page(request, checkpoint, status=400, fork_form=form)
    given = form.cleaned_data
    if not given["confirm"]:
        confirming = ForkForm(initial={**given, "state": pretty(given["state"]), "confirm": True})
        for name in ("reason", "state"):  # what is confirmed is what the diff shows: editing means a new preview
            confirming.fields[name].widget.attrs["readonly"] = True
        return checkpoint_page(request, checkpoint, fork_form=confirming,
                               preview=diff_lines(state_diff(checkpoint.state, given["state"])))
    try:
        fork = checkpoint_fork(project=checkpoint.project, checkpoint_id=checkpoint.pk, actor=Actor.of(request.user),
                               reason=given["reason"], state=given["state"], new_session=given["new_session"])
    except DomainError as exc:
        return checkpoint_page(request, checkpoint, status=exc.http_status, fork_form=form, fork_error=exc.detail)
    messages.success(request, f"Forked from checkpoint {checkpoint.pk}: run {fork.run.pk}, checkpoint "
                              f"{fork.checkpoint.pk}.")
    return redirect("runs:run_inspector", fork.run.pk)

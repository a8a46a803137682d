"""Issue 20, part 2: trimming and compacting a waiting run's session history changes no durable record, refuses
what the pending approval shows, and a real worker's resume still succeeds (the effect once)."""

from typing import Any

import pytest
from django.forms.models import model_to_dict

from harness.actors import Actor
from harness.http.errors import ConflictError
from memory_app.models import ContextSnapshot, MemoryRecord
from runs_app.models import ApprovalRequest, Checkpoint, ExternalEffect, Run, RunStatus, Task
from sessions_app.models import SessionItem
from sessions_app.services import session_items_append
from sessions_app.trimming import APPROVAL_PAGE_ITEMS, session_items_compact, session_items_trim
from tests.worker.support import approve, demo_run, reviewer, wait_status

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
DURABLE = (Task, Checkpoint, ApprovalRequest, ExternalEffect, MemoryRecord)


def _durable(project_id: int) -> dict[str, list[dict[str, Any]]]:
    return {m.__name__: [model_to_dict(r) for r in m.objects.filter(project_id=project_id).order_by("pk")]
            for m in DURABLE}


def test_after_trimming_a_waiting_runs_history_the_records_are_unchanged_and_the_resume_succeeds(
    workers, fake_service
) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    operator = Actor.for_agent("compactor")
    session_items_append(project=run.project, session_id=run.session_id, items=[
        {"role": "user" if i % 2 else "assistant", "content": {"turn": i}, "run_id": run.pk} for i in range(25)])
    before = _durable(run.project_id)

    compacted = session_items_compact(project=run.project, session_id=run.session_id, actor=operator, first_seq=1,
                                      last_seq=10, summary={"summary": "turns 0-9"})
    trimmed = session_items_trim(project=run.project, session_id=run.session_id, actor=operator,
                                 keep_last=APPROVAL_PAGE_ITEMS)
    with pytest.raises(ConflictError) as shown:  # the approval page shows the newest items
        session_items_trim(project=run.project, session_id=run.session_id, actor=operator, keep_last=5)

    assert (compacted.removed, trimmed.removed, shown.value.code) == (10, 6, "item_shown_by_pending_approval")
    remaining = list(SessionItem.objects.filter(session_id=run.session_id).values_list("seq", flat=True))
    assert sorted(remaining) == list(range(16, 26))
    assert _durable(run.project_id) == before

    workers.start("a")
    approve(run, reviewer(run.project))
    done = wait_status(run.pk, RunStatus.SUCCEEDED)

    key = ApprovalRequest.objects.get(run=run).idempotency_key
    assert fake_service.requests[key] == 1
    assert ExternalEffect.objects.get(run=run).status == "consumed"
    assert done.bound_result is not None
    # Whatever the resume handed to the model came from what remains.
    seen = {seq for s in ContextSnapshot.objects.filter(run=run) for seq in s.item_seqs}
    assert seen <= set(remaining)
    assert Run.objects.get(pk=run.pk).last_checkpoint_id != before["Checkpoint"][-1]["id"]

"""An agent's whole working life through the client, sync and async, against a live server."""

import asyncio
import threading
import time
from decimal import Decimal

import pytest
from harness_client import AsyncHarnessClient, ConflictError, HarnessClient

from runs_app.models import ApprovalRequest, Checkpoint, Run
from sessions_app.models import SessionItem
from tests.client.conftest import FAST_RETRY, Live, run_async

pytestmark = pytest.mark.django_db(transaction=True)


def decide_later(live: Live, approval_id: int, *, after: float = 0.3, decision: str = "approve") -> threading.Thread:
    """A reviewer decides through the API (personal token) from another thread, a moment from now."""

    def decide() -> None:
        time.sleep(after)
        with live.client(live.reviewer_token) as reviewer:
            version = reviewer.get_approval(approval_id).version  # a decision is a compare-and-set on it
            reviewer.decide_approval(approval_id, decision, reason="looks right",  # type: ignore[arg-type]
                                     expected_version=version)

    thread = threading.Thread(target=decide, daemon=True)
    thread.start()
    return thread


def test_an_agent_works_a_run_end_to_end(live: Live, hc: HarnessClient) -> None:
    # A session and its items; a stale expected_last_seq is refused with the actual last seq.
    session = hc.create_session(role="writer", memory_policy="session", metadata={"agent": "bot"}, ref="S-1")
    assert (session.role, session.last_seq, session.metadata, session.project) == ("writer", 0, {"agent": "bot"},
                                                                                   "clientco")
    appended = hc.append_items(session.id, [{"role": "user", "content": {"text": "Draft chapter 3"}},
                                            {"role": "assistant", "content": "On it."}], expected_last_seq=0)
    assert [i.seq for i in appended.items] == [1, 2] and appended.last_seq == 2
    with pytest.raises(ConflictError) as stale:
        hc.append_items(session.id, [{"role": "user", "content": "late"}], expected_last_seq=1)
    assert (stale.value.status, stale.value.code, stale.value.body["last_seq"]) == (409, "seq_conflict", 2)
    assert hc.get_session(session.id).last_seq == 2

    # A task, loaded and saved with its version.
    task = hc.create_task(objective="Write chapter 3", plan=["outline", "draft"])
    saved = hc.save_task(task.id, expected_version=task.version, completed_nodes=["outline"], pending_nodes=["draft"])
    assert saved.version == task.version + 1 and hc.get_task(task.id).completed_nodes == ["outline"]

    # A run: created, claimed, heartbeat, running; events.
    run = hc.create_run(session=session.id, task=task.id, active_agent="writer-bot", cost_budget=Decimal("1.50"))
    assert run.status == "created" and run.cost_budget == Decimal("1.5000") and run.created_at.tzinfo is not None
    run = hc.claim_run(run.id, owner="worker-1", lease_seconds=60)
    assert run.lease_owner == "worker-1" and run.lease_expires_at is not None
    run = hc.heartbeat_run(run.id, owner="worker-1", lease_seconds=120)
    run = hc.transition_run(run.id, "running", expected_version=run.version, lease_owner="worker-1")
    assert run.status == "running"
    event = hc.append_event(run.id, "model.call", {"tokens": 12}, lease_owner="worker-1")
    assert [e.kind for e in hc.list_events(run.id)][-1] == "model.call" and event.data == {"tokens": 12}

    # A checkpoint chain with a fork; lineage, latest and list.
    owner = "worker-1"  # the owner the run was claimed with: every write to the leased run names it
    root = hc.create_checkpoint(run=run.id, label="outline", state={"outline": ["a", "b"]}, lease_owner=owner)
    child = hc.create_checkpoint(run=run.id, parent=root.id, label="draft-1", state={"draft": 1}, lease_owner=owner)
    grandchild = hc.create_checkpoint(run=run.id, parent=child.id, label="draft-2", state={"draft": 2},
                                      lease_owner=owner)
    fork = hc.create_checkpoint(run=run.id, parent=root.id, label="draft-1b", state={"draft": "b"}, lease_owner=owner)
    assert (root.depth, child.depth, grandchild.depth, fork.depth) == (0, 1, 2, 1)
    assert [c.id for c in hc.checkpoint_lineage(grandchild.id)] == [grandchild.id, child.id, root.id]
    assert [c.id for c in hc.checkpoint_lineage(fork.id)] == [fork.id, root.id]
    latest = hc.latest_checkpoint(run=run.id)
    assert latest is not None and latest.id == fork.id and hc.get_run(run.id).last_checkpoint == fork.id
    assert [c.id for c in hc.list_checkpoints(run=run.id)] == [fork.id, grandchild.id, child.id, root.id]
    assert [c.id for c in hc.list_checkpoints(run=run.id, before=grandchild.id, page_size=1)] == [child.id, root.id]
    assert hc.get_checkpoint(child.id).state == {"draft": 1}
    assert hc.latest_checkpoint(task=task.id) is not None

    # An effect: intended, delivered once, delivered again answers the same receipt.
    effect = hc.intend_effect(idempotency_key=f"fetch-{run.id}", tool="fetch", arguments={"url": "x"}, run=run.id)
    first = hc.deliver_effect(idempotency_key=effect.idempotency_key, result={"status": 200})
    again = hc.deliver_effect(idempotency_key=effect.idempotency_key, result={"status": 200})
    assert (first.outcome, again.outcome, again.receipt) == ("consumed", "already_consumed", first.receipt)
    assert hc.get_effect(effect.id).status == "consumed"

    # Memory: proposed with provenance, retrieved, superseded; the run's context recorded.
    write = hc.propose_memory(scope="user", scope_key="alice", subject="tea", content="Alice likes green tea.",
                              source_run_id=run.id)
    assert write.outcome == "accepted" and write.record is not None and write.record.provenance.run == run.id
    found = hc.retrieve_memory(scope="user", scope_key="alice", q="tea")
    assert [r.id for r in found] == [write.record.id]
    newer = hc.supersede_memory(write.record.id, content="Alice likes oolong.", source_run_id=run.id,
                                expected_version=write.record.version)
    assert hc.get_memory(write.record.id).superseded_by == newer.id
    assert hc.memory_chain(newer.id).before == [write.record.id]
    snapshot = hc.build_context(run.id, budget_chars=2000, query="tea")
    assert snapshot.run == run.id and hc.get_context(snapshot.id).id == snapshot.id

    # An approval: requested (the run waits), decided by a reviewer elsewhere, and the wait returns it.
    approval = hc.request_approval(run.id, tool="publish_chapter", arguments={"chapter": 3},
                                   idempotency_key=f"publish-{run.id}", risk="high", reason="goes public",
                                   lease_owner="worker-1")
    assert approval.status == "pending" and hc.get_run(run.id).status == "waiting_approval"
    reviewer = decide_later(live, approval.id)
    decided = hc.wait_for_approval(approval.id, timeout=20, poll_interval=0.05, max_poll_interval=0.2)
    reviewer.join(5)
    assert decided.approved and decided.decided_by == "client-reviewer" and decided.decided_at is not None
    assert [a.id for a in hc.list_approvals(run=run.id)] == [approval.id]

    # What the database holds is what the client was told.
    assert SessionItem.objects.filter(session_id=session.id).count() == 2
    assert Checkpoint.objects.filter(run_id=run.id).count() == 5  # 4, and the one the approval request wrote
    assert ApprovalRequest.objects.get(pk=approval.id).status == "approved"
    assert Run.objects.get(pk=run.id).pending_approval_id == approval.id


def test_the_async_client_does_the_same(live: Live) -> None:
    async def flow() -> None:
        async with AsyncHarnessClient(live.url, live.agent_token, retry=FAST_RETRY) as hc:
            session = await hc.create_session(role="writer")
            await hc.append_items(session.id, [{"role": "user", "content": str(n)} for n in range(5)],
                                  expected_last_seq=0)
            assert [i.seq async for i in hc.list_items(session.id, page_size=2)] == [1, 2, 3, 4, 5]
            assert [i.content for i in await hc.recent_items(session.id, 2)] == ["3", "4"]

            run = await hc.create_run(session=session.id)
            run = await hc.claim_run(run.id, owner="async-worker")
            run = await hc.transition_run(run.id, "running", expected_version=run.version, lease_owner="async-worker")
            root = await hc.create_checkpoint(run=run.id, label="root", lease_owner="async-worker")
            child = await hc.create_checkpoint(run=run.id, parent=root.id, label="child", lease_owner="async-worker")
            assert [c.id for c in await hc.checkpoint_lineage(child.id)] == [child.id, root.id]
            run = await hc.get_run(run.id)  # each checkpoint moved the run's version on
            with pytest.raises(ConflictError) as stale:
                await hc.transition_run(run.id, "succeeded", expected_version=run.version - 1,
                                        lease_owner="async-worker")
            assert (stale.value.current_status, stale.value.current_version) == ("running", run.version)

            approval = await hc.request_approval(run.id, tool="send_email", idempotency_key="mail-1",
                                                 arguments={"to": "a@example.com"}, lease_owner="async-worker")
            reviewer = decide_later(live, approval.id, decision="reject")
            decided = await hc.wait_for_approval(approval.id, timeout=20, poll_interval=0.05,
                                                 max_poll_interval=0.2)
            await asyncio.to_thread(reviewer.join, 5)
            assert decided.status == "rejected" and decided.decision_reason == "looks right"
            assert [r.id async for r in hc.list_runs(session=session.id)] == [run.id]

    run_async(flow())

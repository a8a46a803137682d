"""`HarnessSaver(..., end_user=...)`: a real LangGraph graph per end user, checkpointing over HTTP through a token
narrowed to that user (issue 30, part 2: "the adapters use it"), sync and async; its interrupts asked for and
decided through the same token; and another user's saver finding nothing of it."""

import operator
from typing import Annotated, Any, TypedDict

import pytest
from harness_client import AsyncHarnessClient, ConflictError, HarnessClient, NotFoundError
from harness_client.langgraph import HarnessSaver, HarnessUsageCallback, approval_ids, request_approval
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from harness.models import ApiToken
from runs_app.models import ApprovalRequest, Checkpoint, Run
from sessions_app.models import Session
from tests.client.conftest import FAST_RETRY, Live, Recorder, run_async
from tests.client.test_agents_runner import resumes_in_process, reviewer_decides  # noqa: F401 - its fixture

pytestmark = pytest.mark.django_db(transaction=True)


class State(TypedDict):
    topic: str
    notes: Annotated[list[str], operator.add]


def _graph(saver: HarnessSaver, *, ask: bool = False) -> Any:
    """outline -> draft (-> publish, which asks a reviewer first, when `ask`)."""
    builder = StateGraph(State)
    builder.add_node("outline", lambda s: {"notes": [f"outline {s['topic']}"]})
    builder.add_node("draft", lambda s: {"notes": [f"draft {s['topic']}"]})
    builder.add_edge(START, "outline")
    builder.add_edge("outline", "draft")
    if ask:
        def publish(state: State) -> dict[str, Any]:
            decision = request_approval("publish", {"topic": state["topic"]}, reason="public")
            return {"notes": [f"publish {decision['decision']}"]}

        builder.add_node("publish", publish)
        builder.add_edge("draft", "publish")
        builder.add_edge("publish", END)
    else:
        builder.add_edge("draft", END)
    return builder.compile(checkpointer=saver)


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def _thread_checkpoints(thread: str) -> list[str]:
    return sorted(Checkpoint.objects.filter(run__ref=thread).exclude(external_id="")
                  .values_list("external_id", flat=True))


def test_two_end_users_graphs_each_checkpoint_in_their_own_threads(live: Live) -> None:
    recorder = Recorder()
    with HarnessClient(live.url, live.agent_token, retry=FAST_RETRY, transport=recorder) as hc:
        alice, bob = HarnessSaver(client=hc, end_user="u-alice"), HarnessSaver(client=hc, end_user="u-bob")
        graph_a, graph_b = _graph(alice), _graph(bob)
        result_a = graph_a.invoke({"topic": "tea", "notes": []}, _config("alice-chat"))
        result_b = graph_b.invoke({"topic": "coffee", "notes": []}, _config("bob-chat"))
        assert result_a == {"topic": "tea", "notes": ["outline tea", "draft tea"]}
        assert result_b == {"topic": "coffee", "notes": ["outline coffee", "draft coffee"]}
        assert [h.metadata["step"] for h in graph_a.get_state_history(_config("alice-chat"))] == [2, 1, 0, -1]

        # Each thread is a run in a session tagged with its user; every call but the minting carried the user's
        # narrowed token, never the agent's own.
        for thread, user in (("alice-chat", "u-alice"), ("bob-chat", "u-bob")):
            run = Run.objects.get(project=live.project, ref=thread)
            assert Session.objects.get(pk=run.session_id).end_user == user
        parent = f"Bearer {live.agent_token}"
        sent_as_parent = {request.url.path for request, _ in recorder.exchanges
                          if request.headers["Authorization"] == parent}
        assert sent_as_parent == {"/api/v1/tokens/narrow/"}
        assert ApiToken.objects.filter(end_user__in=["u-alice", "u-bob"]).count() == 2

        # Bob's saver finds nothing of Alice's thread, and writes nothing into it.
        alice_checkpoints = _thread_checkpoints("alice-chat")
        assert bob.get_tuple(_config("alice-chat")) is None
        assert list(bob.list(_config("alice-chat"))) == []
        assert {t.config["configurable"]["thread_id"] for t in bob.list(None)} == {"bob-chat"}
        assert graph_b.get_state(_config("alice-chat")).values == {}
        with pytest.raises(ConflictError) as taken:
            graph_b.invoke({"topic": "intrusion", "notes": []}, _config("alice-chat"))
        assert taken.value.code == "thread_ref_taken"
        bob.delete_thread("alice-chat")
        assert _thread_checkpoints("alice-chat") == alice_checkpoints
        alice_run = Run.objects.get(ref="alice-chat").pk
        with pytest.raises(NotFoundError):
            bob.client.get_run(alice_run)
        # Alice's graph carries on from its own state.
        state = graph_a.get_state(_config("alice-chat"))
        assert state.values == result_a and state.next == ()

        # Her usage callback reports to her thread's run through her token.
        usage = HarnessUsageCallback.for_thread(alice, "alice-chat")
        assert usage.run_id == alice_run
        assert usage.client.report_usage(alice_run, tokens=11).tokens_used == 11


def test_the_async_saver_and_the_other_kind_it_makes_are_bound_to_the_user(live: Live, hc: HarnessClient) -> None:
    _graph(HarnessSaver(client=hc, end_user="u-alice")).invoke({"topic": "tea", "notes": []}, _config("alice-chat"))

    async def scenario() -> tuple[Any, Any, Any]:
        async with AsyncHarnessClient(live.url, live.agent_token, retry=FAST_RETRY) as client:
            bob = HarnessSaver(client=client, end_user="u-bob")
            result = await _graph(bob).ainvoke({"topic": "coffee", "notes": []}, _config("bob-chat"))
            return result, await bob.aget_tuple(_config("alice-chat")), bob
    result, seen, bob = run_async(scenario())
    assert result == {"topic": "coffee", "notes": ["outline coffee", "draft coffee"]} and seen is None
    assert Session.objects.get(pk=Run.objects.get(ref="bob-chat").session_id).end_user == "u-bob"
    # The sync client it makes for `invoke` is Bob's too (a token of its own, narrowed to him): not the agent's.
    assert bob.get_tuple(_config("alice-chat")) is None
    assert bob.get_tuple(_config("bob-chat")) is not None
    # A `for_user` client given as `client=`: the async one made from it is bound to the same user.
    carol = HarnessSaver(client=hc.for_user("u-carol"))

    async def carol_reads() -> Any:
        return await carol.aget_tuple(_config("alice-chat"))
    assert run_async(carol_reads()) is None
    assert carol.aclient._narrowing is not None and carol.aclient._narrowing.end_user == "u-carol"
    with pytest.raises(ValueError, match="cannot make another"):
        HarnessSaver(client=hc.for_user("u-dan"), end_user="u-dan")


@pytest.mark.usefixtures("resumes_in_process")
def test_an_end_users_graph_asks_for_and_reads_its_approval_through_its_token(live: Live, hc: HarnessClient) -> None:
    alice, bob = HarnessSaver(client=hc, end_user="u-alice"), HarnessSaver(client=hc, end_user="u-bob")
    graph = _graph(alice, ask=True)
    config = _config("alice-publish")
    interrupted = graph.invoke({"topic": "tea", "notes": []}, config)
    (approval_id,) = approval_ids(interrupted["__interrupt__"])
    approval = ApprovalRequest.objects.get(pk=approval_id)
    assert approval.run.ref == "alice-publish" and approval.status == "pending"
    # Bob's token finds neither the approval nor its run.
    with pytest.raises(NotFoundError):
        bob.client.get_approval(approval_id)
    assert list(bob.client.list_approvals()) == []
    with pytest.raises(NotFoundError):
        bob.wait_for_decision(approval_id, timeout=1, poll_interval=0.05, max_poll_interval=0.1)

    reviewer = reviewer_decides(live, "approve")
    decision = alice.wait_for_decision(approval_id, timeout=30, poll_interval=0.05, max_poll_interval=0.2)
    reviewer.join(timeout=30)
    assert not reviewer.errors  # type: ignore[attr-defined]
    assert decision["decision"] == "approved" and decision["approval"] == approval_id
    result = graph.invoke(Command(resume=decision), config)
    assert result["notes"] == ["outline tea", "draft tea", "publish approved"]
    assert ApprovalRequest.objects.filter(run=approval.run).count() == 1  # asked once, though the node ran twice


@pytest.mark.usefixtures("resumes_in_process")
def test_a_reject_option_reaches_the_graph_with_the_text_for_the_agent(live: Live, hc: HarnessClient) -> None:
    """Issue 33, part 3: the reviewer's reject option and the policy's text for the agent come back in the decision
    the graph resumes with, so the graph can change course."""
    from runs_app.models import ApprovalPolicy

    ApprovalPolicy.objects.create(project=live.project, tool="publish", version=1, reject_options=[
        {"name": "too_early", "reviewer_text": "Not before Friday", "agent_text": "Ask again after Friday."}])
    saver = HarnessSaver(client=hc)
    graph, config = _graph(saver, ask=True), _config("early-publish")
    (approval_id,) = approval_ids(graph.invoke({"topic": "tea", "notes": []}, config)["__interrupt__"])
    reviewer = reviewer_decides(live, lambda _: {"decision": "reject", "reason": "the launch is Friday",
                                                 "reject_option": "too_early"})
    decision = saver.wait_for_decision(approval_id, timeout=30, poll_interval=0.05, max_poll_interval=0.2)
    reviewer.join(timeout=30)
    assert not reviewer.errors  # type: ignore[attr-defined]
    assert (decision["decision"], decision["reject_option"], decision["agent_text"], decision["reason"]) == (
        "rejected", "too_early", "Ask again after Friday.", "the launch is Friday")
    assert graph.invoke(Command(resume=decision), config)["notes"][-1] == "publish rejected"
    seen = hc.get_approval(approval_id)
    assert (seen.reject_option, seen.reject_agent_text) == ("too_early", "Ask again after Friday.")

"""A real `Runner.run(agent, input, session=HarnessSession(...))` with a scripted fake model, end to end through
the live server's HTTP API; tool approvals decided by a reviewer through the API; the offline example."""

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage, function_tool
from agents.items import TResponseOutputItem
from agents.testing import assistant_message, function_call
from harness_client import Approval, HarnessClient
from harness_client.agents import HarnessApprovals, HarnessSession, run_with_approvals

from harness.models import AuditEntry
from runs_app.models import ApprovalRequest, Run, ToolSchema
from sessions_app.models import SessionItem
from tests.client.conftest import FAST_RETRY, Live, run_async
from tests.subprocesses import ROOT
from worker.pipeline import resume_run_by_id

NO_TRACING = RunConfig(tracing_disabled=True)


class FakeModel(Model):
    """A model that answers from a script, one step per call (an output item, or a list of them), and keeps
    what it was given."""

    def __init__(self, *steps: TResponseOutputItem | list[TResponseOutputItem]) -> None:
        self.steps = list(steps)
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, model_settings: Any, tools: Any,
                           output_schema: Any, handoffs: Any, tracing: Any, *, previous_response_id: Any,
                           conversation_id: Any, prompt: Any) -> ModelResponse:
        self.inputs.append(json.loads(json.dumps(input, default=str)))
        step = self.steps.pop(0)
        return ModelResponse(output=step if isinstance(step, list) else [step], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


@pytest.fixture
def env(live: Live, monkeypatch: pytest.MonkeyPatch) -> Live:
    monkeypatch.setenv("HARNESS_URL", live.url)
    monkeypatch.setenv("HARNESS_TOKEN", live.agent_token)
    return live


@pytest.mark.django_db(transaction=True)
def test_two_runs_on_one_harness_session_the_second_sees_the_first(env: Live) -> None:
    model = FakeModel(assistant_message("Hello Ada.", item_id="m1"), assistant_message("You are Ada.", item_id="m2"))
    agent = Agent(name="greeter", instructions="Be brief.", model=model)

    async def conversation() -> tuple[str, str]:
        async with HarnessSession("ada") as session:
            first = await Runner.run(agent, "Hi, I'm Ada.", session=session, run_config=NO_TRACING)
        async with HarnessSession("ada") as session:  # a new process would do the same
            second = await Runner.run(agent, "What is my name?", session=session, run_config=NO_TRACING)
        return str(first.final_output), str(second.final_output)

    assert run_async(conversation()) == ("Hello Ada.", "You are Ada.")
    first_input, second_input = model.inputs
    assert first_input == [{"role": "user", "content": "Hi, I'm Ada."}]
    assert second_input[0] == first_input[0] and second_input[-1] == {"role": "user", "content": "What is my name?"}
    assert second_input[1]["role"] == "assistant" and second_input[1]["content"][0]["text"] == "Hello Ada."
    stored = SessionItem.objects.filter(session__ref="ada", session__project=env.project).order_by("seq")
    assert [(i.seq, i.role) for i in stored] == [(1, "user"), (2, "assistant"), (3, "user"), (4, "assistant")]
    assert stored[3].content["content"][0]["text"] == "You are Ada."


# --- tool approvals ----------------------------------------------------------------------------------------


@pytest.fixture
def resumes_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The resume a decision asks for runs at once, in the server's thread (the real pipeline, no broker)."""
    monkeypatch.setattr("worker.tasks.enqueue_resume", lambda run_id: resume_run_by_id(run_id, owner="worker:t:1"))


Decide = Callable[[Approval], dict[str, Any]]  # an approval -> decide_approval's arguments


def reviewer_decides(live: Live, decision: str | Decide, *, reason: str = "", count: int = 1) -> threading.Thread:
    """A reviewer, with a personal token, decides the next `count` pending approvals as they come (`decision`:
    "approve" / "reject" for all, or a function of each approval)."""
    errors: list[BaseException] = []
    choose: Decide = decision if callable(decision) else (lambda _: {"decision": decision, "reason": reason or None})

    def decide() -> None:
        try:
            with HarnessClient(live.url, live.reviewer_token, retry=FAST_RETRY) as reviewer:
                done: set[int] = set()
                # As long as the agent process may run (the tests give it 120 s): under load its start alone took more
                # than 30 s once, the approval came after this reviewer had gone, and the agent waited until killed.
                deadline = time.monotonic() + 120
                while len(done) < count and time.monotonic() < deadline:
                    for approval in reviewer.list_approvals(status="pending"):
                        if approval.id not in done:
                            reviewer.decide_approval(approval.id, **choose(approval),
                                                     expected_version=approval.version)
                            done.add(approval.id)
                    time.sleep(0.05)
        except Exception as exc:  # noqa: BLE001 - any failure, handed to the test through `errors`
            errors.append(exc)

    thread = threading.Thread(target=decide, daemon=True)
    thread.errors = errors  # type: ignore[attr-defined]
    thread.start()
    return thread


def publishing_agent(model: FakeModel, published: list[int]) -> Agent[Any]:
    @function_tool(needs_approval=True)
    def publish_chapter(chapter: int) -> str:
        """Publish a chapter to the readers."""
        published.append(chapter)
        return f"chapter {chapter} is out"

    return Agent(name="publisher", instructions="Publish when asked.", model=model, tools=[publish_chapter])


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("resumes_in_process")
def test_an_approved_tool_call_runs_once_after_the_reviewers_decision(env: Live) -> None:
    model = FakeModel(function_call("publish_chapter", {"chapter": 3}, call_id="call-pub-3"),
                      assistant_message("Chapter 3 is published.", item_id="m1"))
    published: list[int] = []
    agent = publishing_agent(model, published)
    reviewer = reviewer_decides(env, "approve")

    async def publish() -> tuple[str, int]:
        async with HarnessSession("publisher") as session:
            approvals = HarnessApprovals(session, poll_interval=0.05, max_poll_interval=0.2, timeout=30)
            result = await run_with_approvals(agent, "Publish chapter 3.", session=session, approvals=approvals,
                                              run_config=NO_TRACING)
            # The caller learns what each call came to, and the harness was told the approved call ran.
            assert approvals.outcomes == {"call-pub-3": "approved_ran"}
            assert [d.outcome_state for d in approvals.decisions] == ["approved_ran"]
            return str(result.final_output), await approvals.run_id()

    final, run_id = run_async(publish())
    reviewer.join(5)
    assert not reviewer.errors  # type: ignore[attr-defined]

    assert final == "Chapter 3 is published." and published == [3]
    approval = ApprovalRequest.objects.get(run_id=run_id)
    assert (approval.status, approval.tool, approval.arguments, approval.executor) == (
        "approved", "publish_chapter", {"chapter": 3}, "agent")
    assert approval.idempotency_key == f"agents-sdk:{run_id}:call-pub-3"
    # The adapter registered the function tool's schema first (issue 32): the approval was validated against it.
    schema = ToolSchema.objects.get(project=approval.project, tool="publish_chapter")
    assert (approval.tool_schema_id, approval.tool_schema_version) == (schema.pk, 1)
    assert schema.schema["additionalProperties"] is False and schema.schema["required"] == ["chapter"]
    assert approval.decided_by is not None and approval.decided_by.username == "client-reviewer"
    assert AuditEntry.objects.filter(action="approval.approved", target_id=str(approval.pk)).exists()
    run = Run.objects.get(pk=run_id)
    # The adapter finished the run when the Runner ended (issue 32 part 5).
    assert run.status == "succeeded" and run.bound_result["decision"] == "approved"
    assert (approval.outcome, approval.outcome_at is not None) == ("ran", True)
    kinds = [i.content.get("type") for i in SessionItem.objects.filter(session=run.session).order_by("seq")]
    assert kinds == [None, "function_call", "function_call_output", "message"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("resumes_in_process")
def test_a_reject_option_tells_the_model_what_to_do_instead(env: Live) -> None:
    """Issue 33, part 3: the policy's reject option and its text for the agent are in the tool's output the model
    reads, and in the approval the caller gets."""
    from runs_app.models import ApprovalPolicy

    ApprovalPolicy.objects.create(project=env.project, tool="publish_chapter", version=1, reject_options=[
        {"name": "not_edited", "reviewer_text": "The editor has not signed it off",
         "agent_text": "Send the chapter to the editor first, then ask again."}])
    model = FakeModel(function_call("publish_chapter", {"chapter": 7}, call_id="call-pub-7"),
                      assistant_message("Sending it to the editor.", item_id="m1"))
    published: list[int] = []
    reviewer = reviewer_decides(env, lambda _: {"decision": "reject", "reason": "no sign-off",
                                                "reject_option": "not_edited"})

    async def publish() -> str:
        async with HarnessSession("publisher-7") as session:
            approvals = HarnessApprovals(session, poll_interval=0.05, max_poll_interval=0.2, timeout=30)
            result = await run_with_approvals(publishing_agent(model, published), "Publish chapter 7.",
                                              session=session, approvals=approvals, run_config=NO_TRACING)
            assert approvals.outcomes == {"call-pub-7": "rejected"}
            return str(result.final_output)

    assert run_async(publish()) == "Sending it to the editor."
    reviewer.join(5)
    assert not reviewer.errors and published == []  # type: ignore[attr-defined]
    output = model.inputs[-1][-1]["output"]
    assert "no sign-off" in output and "[not_edited] Send the chapter to the editor first, then ask again." in output
    assert ApprovalRequest.objects.get(project=env.project).reject_option == "not_edited"


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("resumes_in_process")
def test_a_rejected_tool_call_never_runs_and_the_model_reads_the_reason(env: Live) -> None:
    model = FakeModel(function_call("publish_chapter", {"chapter": 4}, call_id="call-pub-4"),
                      assistant_message("Understood, not publishing.", item_id="m1"))
    published: list[int] = []
    agent = publishing_agent(model, published)
    reviewer = reviewer_decides(env, "reject", reason="chapter 4 is not edited yet")

    async def publish() -> str:
        async with HarnessSession("publisher-2") as session:
            approvals = HarnessApprovals(session, poll_interval=0.05, max_poll_interval=0.2, timeout=30)
            result = await run_with_approvals(agent, "Publish chapter 4.", session=session, approvals=approvals,
                                              run_config=NO_TRACING)
            assert approvals.outcomes == {"call-pub-4": "rejected"}
            return str(result.final_output)

    assert run_async(publish()) == "Understood, not publishing."
    reviewer.join(5)
    assert published == []
    tool_output = model.inputs[-1][-1]
    assert tool_output["type"] == "function_call_output" and "chapter 4 is not edited yet" in tool_output["output"]
    assert ApprovalRequest.objects.get(project=env.project).status == "rejected"


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("resumes_in_process")
def test_two_calls_in_one_turn_are_asked_in_turn_on_one_run(env: Live) -> None:
    """Chapter 5 approved, chapter 6 rejected: one run takes both approvals, one after the other."""
    model = FakeModel([function_call("publish_chapter", {"chapter": 5}, call_id="call-5"),
                       function_call("publish_chapter", {"chapter": 6}, call_id="call-6")],
                      assistant_message("Chapter 5 is out; 6 waits.", item_id="m1"))
    published: list[int] = []
    agent = publishing_agent(model, published)

    def per_chapter(approval: Approval) -> dict[str, Any]:
        if approval.arguments == {"chapter": 5}:
            return {"decision": "approve"}
        return {"decision": "reject", "reason": "chapter 6 needs another pass"}

    reviewer = reviewer_decides(env, per_chapter, count=2)

    async def publish() -> tuple[str, list[str], int]:
        async with HarnessSession("two-calls") as session:
            approvals = HarnessApprovals(session, poll_interval=0.05, max_poll_interval=0.2, timeout=30)
            result = await run_with_approvals(agent, "Publish chapters 5 and 6.", session=session,
                                              approvals=approvals, run_config=NO_TRACING)
            return str(result.final_output), [a.status for a in approvals.decisions], await approvals.run_id()

    final, statuses, run_id = run_async(publish())
    reviewer.join(5)
    assert not reviewer.errors  # type: ignore[attr-defined]
    assert final == "Chapter 5 is out; 6 waits." and published == [5] and statuses == ["approved", "rejected"]
    asked = ApprovalRequest.objects.filter(run_id=run_id).order_by("pk")
    assert [(a.arguments, a.status) for a in asked] == [({"chapter": 5}, "approved"), ({"chapter": 6}, "rejected")]
    outputs = {i["call_id"]: i["output"] for i in model.inputs[-1] if i.get("type") == "function_call_output"}
    assert outputs["call-5"] == "chapter 5 is out" and "chapter 6 needs another pass" in outputs["call-6"]
    assert Run.objects.get(pk=run_id).status == "succeeded"  # finished with the Runner


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("resumes_in_process")
def test_arguments_a_reviewer_edited_are_not_run_in_place_of_the_models(env: Live) -> None:
    """The SDK can run only the call the model made: an edited approval comes back as a rejection that
    names the approved arguments, and the tool does not run with either."""
    model = FakeModel(function_call("publish_chapter", {"chapter": 7}, call_id="call-7"),
                      assistant_message("I will ask for chapter 8 instead.", item_id="m1"))
    published: list[int] = []
    agent = publishing_agent(model, published)
    reviewer = reviewer_decides(env, lambda _: {"decision": "approve", "edited_arguments": {"chapter": 8},
                                                "reason": "chapter 8 is next"})

    async def publish() -> str:
        async with HarnessSession("edited") as session:
            approvals = HarnessApprovals(session, poll_interval=0.05, max_poll_interval=0.2, timeout=30)
            result = await run_with_approvals(agent, "Publish chapter 7.", session=session, approvals=approvals,
                                              run_config=NO_TRACING)
            assert approvals.outcomes == {"call-7": "approved_not_run"}
            return str(result.final_output)

    assert run_async(publish()) == "I will ask for chapter 8 instead."
    reviewer.join(5)
    assert published == []
    tool_output = model.inputs[-1][-1]
    assert tool_output["call_id"] == "call-7" and '{"chapter": 8}' in tool_output["output"]
    # Approved, and not run: the harness says so (with the reason the model read), not "approved" alone.
    approval = ApprovalRequest.objects.get(project=env.project)
    assert (approval.status, approval.outcome) == ("approved", "not_run")
    assert '{"chapter": 8}' in approval.outcome_reason and "It was not run" in approval.outcome_reason
    assert approval.arguments_changes == [{"path": "chapter", "kind": "changed", "before": 7, "after": 8}]


# --- the example, as a user runs it -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("resumes_in_process")
def test_the_offline_example_runs_against_a_live_server(live: Live) -> None:
    reviewer = reviewer_decides(live, "approve")
    env = {**os.environ, "HARNESS_URL": live.url, "HARNESS_TOKEN": live.agent_token, "OPENAI_API_KEY": ""}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "agents_sdk_session.py")], env=env,
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    reviewer.join(5)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "approved by client-reviewer" in done.stdout
    approval = ApprovalRequest.objects.get(project=live.project)
    assert approval.status == "approved" and approval.tool == "publish_chapter"
    assert SessionItem.objects.filter(session__project=live.project).count() >= 6

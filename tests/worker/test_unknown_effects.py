"""Issue 16, section 4: an effect whose outcome cannot be proven is never re-sent without a reason to.

In-process resumes of the demo run R-101 (approved `publish_chapter`), its tool routed to a counting HTTP
service or a counting Python tool; "a worker died here" is a crash hook raising a BaseException the pipeline
does not catch (the lease and the dispatched effect stay as a dead worker leaves them). The same story with a
real `kill -9` is in test_worker_processes.py.
"""

import datetime as dt
import hashlib
from collections.abc import Iterator

import pytest
from django.test import override_settings
from django.utils import timezone

from harness.actors import Actor
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.models import AuditEntry
from runs_app.models import ApprovalRequest, EffectStatus, ExternalEffect, NodeExecution, Run, RunStatus
from runs_app.services import Resend, effect_dispatch, effect_resolve
from tests import factories
from tests.worker import tools
from tests.worker.support import FakeService, approve, demo_run, events, reviewer
from worker import faults
from worker.pipeline import resume_run_by_id
from worker.recovery import effects_reconcile, recovery_candidates

OWNER = "worker:test:1"
pytestmark = pytest.mark.django_db


class Crash(BaseException):
    """The process died here (the pipeline catches Exception, never this)."""


@pytest.fixture
def service() -> Iterator[FakeService]:
    fake = FakeService().start()
    yield fake
    fake.stop()


@pytest.fixture
def crash_at() -> Iterator[list[str]]:
    points: list[str] = []

    def hook(name: str) -> None:
        if name in points:
            points.remove(name)
            raise Crash(name)

    faults.install(hook)
    yield points
    faults.install(None)


@pytest.fixture(autouse=True)
def _tools() -> Iterator[None]:
    tools.reset()
    yield
    tools.reset()


def _http(service: FakeService, **declared: object) -> dict:
    return {"publish_chapter": {"kind": "http", "url": service.url, "timeout": 2, "connect_timeout": 2, **declared}}


def _dead_worker_left(run: Run, crash_at: list[str], point: str = "after_call") -> ExternalEffect:
    """Resume, die at `point`, let the lease run out, and run the recovery pass's effect reconciliation."""
    crash_at.append(point)
    with pytest.raises(Crash):
        resume_run_by_id(run.pk, owner="worker:dead:1")
    Run.objects.filter(pk=run.pk).update(lease_expires_at=timezone.now() - dt.timedelta(seconds=1))
    effects_reconcile()
    return ExternalEffect.objects.get(run=run)


def _key(run: Run) -> str:
    return ApprovalRequest.objects.get(run=run).idempotency_key


def test_a_non_idempotent_tools_unknown_effect_blocks_the_run_and_is_never_re_sent(service, crash_at) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    approve(run, reviewer(run.project))
    with override_settings(HARNESS_TOOL_ADAPTERS=_http(service)):
        effect = _dead_worker_left(run, crash_at)
        assert (effect.status, service.requests[_key(run)]) == (EffectStatus.UNKNOWN, 1)
        assert run.pk in recovery_candidates()  # the dead worker's run is resumed...

        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"
        # ...and stops: nobody can prove whether the publish happened.
        run.refresh_from_db()
        assert (run.status, run.blocked_step, run.failure_category) == (
            RunStatus.BLOCKED, "unknown_effect", "irreversible")
        assert "a person decides" in run.error["reason"]
        # More resume messages, more recovery passes: still one request at the tool.
        assert run.pk not in recovery_candidates()
        assert resume_run_by_id(run.pk, owner=OWNER) == "stopped"
        assert service.requests[_key(run)] == 1
        effect.refresh_from_db()
        assert (effect.status, effect.attempts) == (EffectStatus.UNKNOWN, 1)


def test_a_person_retries_it_under_the_same_key_once_then_the_run_goes_on(service, crash_at) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    rita = reviewer(run.project)
    approve(run, rita)
    with override_settings(HARNESS_TOOL_ADAPTERS=_http(service)):
        effect = _dead_worker_left(run, crash_at)
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

        decided = effect_resolve(project=run.project_id, effect_id=effect.pk, actor=Actor.for_user(rita),
                                 decision="retry", reason="the service deduplicates by key, checked with them")
        assert (decided.status, decided.retry_authorized) == (EffectStatus.UNKNOWN, True)
        assert run.pk in recovery_candidates()

        assert resume_run_by_id(run.pk, owner=OWNER) == "done"

    run.refresh_from_db()
    effect.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert (service.requests[_key(run)], service.executions[_key(run)]) == (2, 1)
    assert (effect.status, effect.attempts, effect.retry_authorized) == (EffectStatus.CONSUMED, 2, False)
    assert effect.resolution["decision"] == "retry" and effect.resolution["by"] == rita.username
    entry = AuditEntry.objects.get(target_type="externaleffect", target_id=str(effect.pk))
    assert (entry.action, entry.actor, entry.data["attempts"]) == ("effect.retry", f"user:{rita.username}", 1)


def test_a_person_marks_it_delivered_with_evidence_and_the_tool_is_not_called_again(service, crash_at) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    rita = reviewer(run.project)
    approve(run, rita)
    result = {"published": True, "url": "/novelforge/chapters/3", "seen": "on the site"}
    with override_settings(HARNESS_TOOL_ADAPTERS=_http(service)):
        effect = _dead_worker_left(run, crash_at)
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"
        with pytest.raises(ValidationFailed) as no_evidence:
            effect_resolve(project=run.project_id, effect_id=effect.pk, actor=Actor.for_user(rita),
                           decision="mark_delivered", result=result)
        assert no_evidence.value.code == "evidence_required"

        effect_resolve(project=run.project_id, effect_id=effect.pk, actor=Actor.for_user(rita),
                       decision="mark_delivered", evidence="chapter 3 is live at /novelforge/chapters/3",
                       result=result)
        assert resume_run_by_id(run.pk, owner=OWNER) == "done"

    run.refresh_from_db()
    effect.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert service.requests[_key(run)] == 1
    assert run.bound_result["result"] == result and run.bound_result["receipt"] == effect.receipt
    assert (effect.status, effect.result, effect.attempts) == (EffectStatus.CONSUMED, result, 1)
    assert effect.resolution["evidence"].startswith("chapter 3 is live")
    assert AuditEntry.objects.filter(target_id=str(effect.pk), action="effect.mark_delivered").count() == 1


def test_a_person_abandons_it_and_the_worker_driven_plan_fails_without_a_call(service, crash_at) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    rita = reviewer(run.project)
    approve(run, rita)
    with override_settings(HARNESS_TOOL_ADAPTERS=_http(service)):
        effect = _dead_worker_left(run, crash_at)
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"
        effect_resolve(project=run.project_id, effect_id=effect.pk, actor=Actor.for_user(rita), decision="abandon",
                       reason="the publisher cannot tell; we will republish by hand")
        assert resume_run_by_id(run.pk, owner=OWNER) == "done"

    run.refresh_from_db()
    effect.refresh_from_db()
    assert (run.status, run.failure_category) == (RunStatus.FAILED, "irreversible")
    assert run.bound_result["decision"] == "abandoned" and "by hand" in run.error["reason"]
    assert (effect.status, service.requests[_key(run)]) == (EffectStatus.ABANDONED, 1)
    publish = NodeExecution.objects.get(run=run, node="publish")
    assert (publish.status, publish.failure_category) == ("failed", "irreversible")


def test_a_tool_that_honours_keys_is_re_sent_automatically(service, crash_at) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    approve(run, reviewer(run.project))
    with override_settings(HARNESS_TOOL_ADAPTERS=_http(service, honours_idempotency_key=True)):
        _dead_worker_left(run, crash_at)
        assert resume_run_by_id(run.pk, owner=OWNER) == "done"
    assert Run.objects.get(pk=run.pk).status == RunStatus.SUCCEEDED
    assert (service.requests[_key(run)], service.executions[_key(run)]) == (2, 1)


@pytest.mark.parametrize(("point", "looked_up"), [("after_call", "found"), ("before_call", "not_found")])
def test_a_tool_that_can_look_up_a_key_is_asked_first(crash_at, point: str, looked_up: str) -> None:  # type: ignore[no-untyped-def]
    """after_call: it happened, the lookup finds the result, no second call. before_call: it never left, the
    lookup says so, and the call is made (the first and only one the tool receives)."""
    run = demo_run()
    approve(run, reviewer(run.project))
    adapters = {"publish_chapter": {"kind": "python", "callable": "tests.worker.tools.publish",
                                    "lookup": "tests.worker.tools.look_up"}}
    with override_settings(HARNESS_TOOL_ADAPTERS=adapters):
        effect = _dead_worker_left(run, crash_at, point)
        assert effect.status == EffectStatus.UNKNOWN
        assert resume_run_by_id(run.pk, owner=OWNER) == "done"

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert [_key(run)] == tools.CALLS
    assert run.bound_result["result"]["url"] == "/chapters/3"
    assert events(run.pk, "resume.bind_result")[-1].data["looked_up"] == looked_up


def test_a_lost_reply_from_a_non_idempotent_tool_blocks_at_once_without_a_retry(service) -> None:  # type: ignore[no-untyped-def]
    service.delay = 1.5
    run = demo_run()
    approve(run, reviewer(run.project))
    adapters = _http(service)
    adapters["publish_chapter"]["timeout"] = 0.3
    with override_settings(HARNESS_TOOL_ADAPTERS=adapters):
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"
    run.refresh_from_db()
    assert (run.blocked_step, run.lease_owner) == ("unknown_effect", "")
    assert ExternalEffect.objects.get(run=run).status == EffectStatus.UNKNOWN
    assert service.requests[_key(run)] == 1


def test_a_2xx_the_adapter_cannot_parse_is_the_tools_result_kept_raw_with_its_hash(service) -> None:  # type: ignore[no-untyped-def]
    service.raw = b"OK published chapter 3 \xff"
    run = demo_run()
    approve(run, reviewer(run.project))
    with override_settings(HARNESS_TOOL_ADAPTERS=_http(service)):
        assert resume_run_by_id(run.pk, owner=OWNER) == "done"
    run.refresh_from_db()
    effect = ExternalEffect.objects.get(run=run)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert effect.status == EffectStatus.CONSUMED and effect.failure_category == ""
    assert effect.result["body_sha256"] == hashlib.sha256(service.raw).hexdigest()
    assert effect.result["unparsed_body"].startswith("OK published chapter 3")
    assert (effect.result["status"], effect.result["content_type"]) == (200, "text/plain")


def test_who_may_decide_an_unknown_effect(service, crash_at, other_project) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    rita = reviewer(run.project)
    approve(run, rita)
    with override_settings(HARNESS_TOOL_ADAPTERS=_http(service)):
        effect = _dead_worker_left(run, crash_at)
    decide = {"project": run.project_id, "effect_id": effect.pk, "decision": "retry"}
    with pytest.raises(Forbidden):
        effect_resolve(actor=Actor.for_agent("writer-1"), **decide)
    with pytest.raises(Forbidden):
        effect_resolve(actor=Actor.for_user(factories.make_user("olive", role="operator", projects=[run.project])),
                       **decide)
    with pytest.raises(NotFoundError):
        effect_resolve(actor=Actor.for_user(reviewer(other_project, "otto")), **decide)
    with pytest.raises(ValidationFailed):
        effect_resolve(actor=Actor.for_user(rita), **{**decide, "decision": "abandon"})  # no reason
    effect_resolve(actor=Actor.for_user(rita), **{**decide, "decision": "abandon"}, reason="gone")
    with pytest.raises(ConflictError) as twice:
        effect_resolve(actor=Actor.for_user(rita), **decide)
    assert (twice.value.code, twice.value.current_status) == ("effect_not_unknown", "abandoned")
    assert ExternalEffect.objects.get(pk=effect.pk).status == EffectStatus.ABANDONED


def test_an_unknown_effect_is_dispatched_again_only_for_a_reason(service, crash_at) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    approve(run, reviewer(run.project))
    with override_settings(HARNESS_TOOL_ADAPTERS=_http(service)):
        effect = _dead_worker_left(run, crash_at)
    with pytest.raises(ConflictError):
        effect_dispatch(project=run.project_id, effect_id=effect.pk)
    with pytest.raises(ConflictError):
        effect_dispatch(project=run.project_id, effect_id=effect.pk, resend=Resend.PERSON)  # nobody allowed it
    assert effect_dispatch(project=run.project_id, effect_id=effect.pk, resend=Resend.ADAPTER).attempts == 2

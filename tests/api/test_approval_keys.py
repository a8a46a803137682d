"""An approval's idempotency key names one action (issue 19, defects 1 and 2).

Before the fix an agent token could plant an effect under an approval (naming it, or only its key) with other
arguments, or ask a new approval under a key already consumed by another action: both answered 201, and the
approved action could then only end `blocked` at `bind_result`. Each test goes through the API and, where the
harm was the blocked run, through the resume worker to the end.
"""

from typing import Any

import pytest

from demo.scenario import DEMO_ACTION
from harness.canonical import action_fingerprint
from runs_app.models import ApprovalRequest, ExternalEffect, Run, RunStatus
from runs_app.services import run_transition
from tests import factories
from tests.api.conftest import ApiClient
from tests.worker.support import demo_run
from worker.pipeline import resume_run_by_id

pytestmark = pytest.mark.django_db

TOOL = "publish_chapter"
OTHER = {"chapter": 3, "title": "Mallory's cut", "to": "mallory"}


class Scene:
    """The demo's R-101 waiting on its publish_chapter approval, an agent token and a reviewer token."""

    def __init__(self) -> None:
        run = demo_run(factories.make_project("keys"))
        self.run_id = run.pk
        self.approval = ApprovalRequest.objects.get(pk=run.pending_approval_id)
        self.key = self.approval.idempotency_key
        self.agent = ApiClient(factories.make_agent_token(run.project, name="keys-agent")[1])
        rita = factories.make_user("keys-reviewer", role="reviewer", projects=[run.project])
        self.reviewer = ApiClient(factories.make_personal_token(rita)[1])

    def intend(self, **body: Any) -> Any:
        return self.agent.post("/api/v1/effects/", {"tool": TOOL, "run": self.run_id, **body})

    def intend_for(self, run: Run, **body: Any) -> Any:
        """The intent for another run of the project, running (R-101 waits: it may not declare an action)."""
        return self.agent.post("/api/v1/effects/", {"tool": TOOL, "run": run.pk, **body})

    def approve(self, **body: Any) -> None:
        decided = self.reviewer.post(f"/api/v1/approvals/{self.approval.pk}/decision/",
                                     {"decision": "approve", "expected_version": self.approval.version, **body})
        assert decided.status_code == 200, decided.json()


@pytest.fixture
def scene(settings: Any) -> Scene:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return Scene()


def _running_run(scene: Scene) -> Run:
    other = factories.make_run(Run.objects.get(pk=scene.run_id).project)
    return run_transition(project=other.project_id, run_id=other.pk, to=RunStatus.RUNNING, expected_version=None)


def _refused(response: Any, code: str) -> None:
    assert (response.status_code, response.json()["code"]) == (409, code), response.json()


def test_an_effect_under_a_pending_approval_is_refused_whatever_key_or_arguments(scene: Scene) -> None:
    _refused(scene.intend(idempotency_key=scene.key, arguments=OTHER, approval=scene.approval.pk),
             "approval_not_approved")
    _refused(scene.intend(idempotency_key="other-key", arguments=OTHER, approval=scene.approval.pk),
             "approval_not_approved")
    # Not naming the approval, only holding its key: the reviewer may still edit the arguments.
    _refused(scene.intend(idempotency_key=scene.key, arguments=OTHER), "approval_not_approved")
    _refused(scene.intend(idempotency_key=scene.key, arguments=dict(DEMO_ACTION)), "approval_not_approved")
    assert not ExternalEffect.objects.filter(project_id=scene.approval.project_id).exists()


def test_a_planted_effect_cannot_block_the_approved_action(scene: Scene) -> None:
    scene.approve()

    _refused(scene.intend(idempotency_key=scene.key, arguments=OTHER, approval=scene.approval.pk),
             "approval_mismatch")
    _refused(scene.intend(idempotency_key="other-key", arguments=OTHER, approval=scene.approval.pk),
             "approval_mismatch")
    _refused(scene.intend(idempotency_key="other-key", arguments=dict(DEMO_ACTION), approval=scene.approval.pk),
             "approval_mismatch")
    _refused(scene.intend(idempotency_key=scene.key, arguments=OTHER), "idempotency_key_reused")
    _refused(scene.intend(idempotency_key=scene.key, tool="send_invoice", arguments=dict(DEMO_ACTION)),
             "idempotency_key_reused")
    assert not ExternalEffect.objects.filter(project_id=scene.approval.project_id).exists()

    assert resume_run_by_id(scene.run_id, owner="worker:keys:1") == "done"

    run = Run.objects.get(pk=scene.run_id)
    assert (run.status, run.blocked_step) == (RunStatus.SUCCEEDED, "")
    effect = ExternalEffect.objects.get(project_id=scene.approval.project_id)
    assert (effect.idempotency_key, effect.approval_id, effect.status) == (scene.key, scene.approval.pk, "consumed")


def test_the_approved_action_itself_may_be_intended_under_its_key(scene: Scene) -> None:
    edited = {**DEMO_ACTION, "title": "Edited"}
    scene.approve(edited_arguments=edited, reason="a better title")

    _refused(scene.intend(idempotency_key=scene.key, arguments=dict(DEMO_ACTION), approval=scene.approval.pk),
             "approval_mismatch")  # the requested arguments, not the approved ones
    # The approved action itself, but R-101 still waits for its resume: it may not declare an action yet.
    _refused(scene.intend(idempotency_key=scene.key, arguments=edited, approval=scene.approval.pk), "run_not_acting")
    running = _running_run(scene)
    first = scene.intend_for(running, idempotency_key=scene.key, arguments=edited, approval=scene.approval.pk)
    again = scene.intend_for(running, idempotency_key=scene.key, arguments=edited)

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).approved_fingerprint == action_fingerprint(TOOL, edited)


def test_an_approval_may_not_reuse_a_key_consumed_by_another_action(scene: Scene) -> None:
    scene.approve()
    assert resume_run_by_id(scene.run_id, owner="worker:keys:1") == "done"
    other = _running_run(scene)

    asked = scene.agent.post(f"/api/v1/runs/{other.pk}/approvals/",
                             {"tool": TOOL, "arguments": OTHER, "idempotency_key": scene.key})

    _refused(asked, "idempotency_key_reused")
    assert not ApprovalRequest.objects.filter(run=other).exists()
    assert Run.objects.get(pk=other.pk).status == RunStatus.RUNNING
    # The same action under the key is not a reuse: it asks (the resume then finds the effect consumed).
    same = scene.agent.post(f"/api/v1/runs/{other.pk}/approvals/",
                            {"tool": TOOL, "arguments": dict(DEMO_ACTION), "idempotency_key": scene.key})
    assert same.status_code == 201, same.json()


def test_an_approval_may_not_take_a_key_a_live_approval_holds_for_another_action(scene: Scene) -> None:
    other = _running_run(scene)

    asked = scene.agent.post(f"/api/v1/runs/{other.pk}/approvals/",
                             {"tool": TOOL, "arguments": OTHER, "idempotency_key": scene.key})

    _refused(asked, "idempotency_key_reused")
    assert ApprovalRequest.objects.filter(idempotency_key=scene.key).count() == 1

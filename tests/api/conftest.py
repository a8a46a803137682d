"""Fixtures for the API tests: bearer clients and a small world of records in two projects."""

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from harness.actors import Actor
from harness.models import Project
from runs_app import services as run_services
from runs_app.models import ApprovalRequest, Checkpoint, ExternalEffect, Run, Task
from sessions_app.models import Session
from tests import factories


class ApiClient:
    """A JSON client that sends one principal's credentials on every request."""

    def __init__(self, secret: str | None = None, client: Client | None = None) -> None:
        self.client = client or Client()
        self.headers: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Bearer {secret}"} if secret else {}

    def call(self, method: str, path: str, body: Any = None, **headers: str) -> Any:
        kwargs: dict[str, Any] = {**self.headers, **headers}
        if body is not None:
            kwargs.update(data=body, content_type="application/json")
        return getattr(self.client, method.lower())(path, **kwargs)

    def get(self, path: str, **headers: str) -> Any:
        return self.call("GET", path, **headers)

    def post(self, path: str, body: Any = None, **headers: str) -> Any:
        return self.call("POST", path, {} if body is None else body, **headers)

    def post_raw(self, path: str, text: str) -> Any:
        """POST a body exactly as written (malformed or hostile JSON)."""
        return self.client.generic("POST", path, text.encode("utf-8", "surrogatepass"), "application/json",
                                   **self.headers)

    def patch(self, path: str, body: Any = None, **headers: str) -> Any:
        return self.call("PATCH", path, {} if body is None else body, **headers)


_READS_VERSION = re.compile(r"^/api/v1/(handoffs|sessions|tasks)/(\d+)/(accept|return|cancel|transition)/$")


class VersionReadingClient(ApiClient):
    """An ApiClient that sends a state change at the version it reads first, as the Python client's callers do
    (`expected_version` is required): for tests of what a door does with a current version. A record it cannot
    read gets version 1, so the door still answers its own refusal (404, 403)."""

    def post(self, path: str, body: Any = None, **headers: str) -> Any:
        match = _READS_VERSION.match(path)
        if match is not None and isinstance(body, dict) and "expected_version" not in body:
            read = self.get(f"/api/v1/{match[1]}/{match[2]}/")
            body = {**body, "expected_version": read.json()["version"] if read.status_code == 200 else 1}
        return super().post(path, body, **headers)


@dataclass
class World:
    """One project's records in the states the endpoints need, plus who can reach them."""

    project: Project
    session: Session
    task: Task
    run: Run  # created, with the task and a checkpoint, leased to "<prefix>-worker"
    running_run: Run  # running, leased to nobody
    waiting_run: Run  # waiting_approval, with `approval` pending
    approval: ApprovalRequest
    checkpoint: Checkpoint
    effect: ExternalEffect  # intended, on running_run
    agent: ApiClient
    reader: ApiClient  # an agent token with the read-only role
    reviewer: ApiClient  # a console user with the reviewer role, personal token
    operator: ApiClient  # a console user with the operator role, personal token
    roleless: ApiClient  # a project member holding no role, personal token


def build_world(project: Project, prefix: str) -> World:
    session = factories.make_session(project, ref=f"{prefix}-S")
    task = factories.make_task(project, plan=["outline", "draft"])
    run = factories.make_run(project, session, task_id=task.pk)
    running = factories.make_run(project, session)
    run_services.run_transition(project=project, run_id=running.pk, to="running", expected_version=None)
    waiting = factories.make_run(project, session)
    run_services.run_transition(project=project, run_id=waiting.pk, to="running", expected_version=None)
    approval = run_services.approval_request_create(
        project=project, run_id=waiting.pk, tool="send_email", arguments={"to": "a@example.com"},
        idempotency_key=f"{prefix}-approval", actor=Actor.for_agent("seed"),
    )
    checkpoint = run_services.checkpoint_create(project=project, run_id=run.pk, label="first")
    run_services.run_claim(project=project, run_id=run.pk, owner=f"{prefix}-worker", lease_seconds=300)
    effect, _ = run_services.effect_intend(
        project=project, idempotency_key=f"{prefix}-effect", tool="publish", arguments={"n": 1}, run_id=running.pk
    )
    _, agent_secret = factories.make_agent_token(project, name=f"{prefix}-agent")
    _, reader_secret = factories.make_agent_token(project, name=f"{prefix}-reader", role="reader")
    reviewer = factories.make_user(f"{prefix}-reviewer", role="reviewer", projects=[project])
    operator = factories.make_user(f"{prefix}-operator", role="operator", projects=[project])
    roleless = factories.make_user(f"{prefix}-member", projects=[project])
    return World(
        project=project, session=session, task=Task.objects.get(pk=task.pk), run=Run.objects.get(pk=run.pk),
        running_run=Run.objects.get(pk=running.pk), waiting_run=Run.objects.get(pk=waiting.pk),
        approval=approval, checkpoint=checkpoint, effect=effect,
        agent=ApiClient(agent_secret), reader=ApiClient(reader_secret),
        reviewer=ApiClient(factories.make_personal_token(reviewer)[1]),
        operator=ApiClient(factories.make_personal_token(operator)[1]),
        roleless=ApiClient(factories.make_personal_token(roleless)[1]),
    )


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # Every world makes console users; the production hasher would dominate these tests' run time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def world(project: Project) -> World:
    return build_world(project, "acme")


@pytest.fixture
def other_world(other_project: Project) -> World:
    return build_world(other_project, "globex")


@pytest.fixture
def anonymous() -> ApiClient:
    return ApiClient()


@pytest.fixture
def agent_for() -> Callable[[Project], ApiClient]:
    def make(project: Project, role: str = "agent") -> ApiClient:
        return ApiClient(factories.make_agent_token(project, name=f"extra-{role}", role=role)[1])

    return make

"""Issue 30, section 6: a `ref` the project has already answers JSON, always (409 `already_exists` with the id).

Sent with an Idempotency-Key, a session's or a task's duplicate ref used to answer Django's HTML 500: the unique
violation aborted the key's transaction (harness.http.idempotency runs the view inside it) and the reply could not
be stored. Each door (sessions, tasks, runs), with and without a key. Eight concurrent openers of one
HarnessSession are in tests/client/test_agents_sdk_concurrent_open.py.
"""

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from harness.models import IdempotentRequest
from runs_app.models import Run, Task
from sessions_app.models import Session
from tests.api.conftest import World

pytestmark = pytest.mark.django_db

Door = tuple[str, type[Any], Callable[[World], dict[str, Any]]]
DOORS: list[Door] = [
    ("/api/v1/sessions/", Session, lambda w: {"role": "writer", "memory_policy": "session"}),
    ("/api/v1/tasks/", Task, lambda w: {"objective": "Write chapter 4"}),
    ("/api/v1/runs/", Run, lambda w: {"session": w.session.pk}),
]


@pytest.mark.parametrize("keyed", [False, True], ids=["no-key", "idempotency-key"])
@pytest.mark.parametrize("door", DOORS, ids=["sessions", "tasks", "runs"])
def test_a_taken_ref_is_409_already_exists_with_the_existing_id(world: World, door: Door, keyed: bool) -> None:
    path, model, body_of = door
    body = {**body_of(world), "ref": "R-42"}
    first = world.agent.post(path, body, HTTP_IDEMPOTENCY_KEY=f"first-{uuid.uuid4()}")
    assert first.status_code == 201, first.content
    count = model.objects.count()
    key = f"dup-{uuid.uuid4()}"
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if keyed else {}

    duplicate = world.agent.post(path, body, **headers)

    assert duplicate.status_code == 409, duplicate.content
    assert duplicate["Content-Type"] == "application/json"
    answer = duplicate.json()
    assert (answer["code"], answer["id"], answer["ref"]) == ("already_exists", first.json()["id"], "R-42")
    assert model.objects.count() == count
    if keyed:
        # The final answer to that request, replayed under its key; nothing else was written.
        again = world.agent.post(path, body, **headers)
        assert (again.status_code, again.json()["id"], again["Idempotent-Replayed"]) == (409, first.json()["id"],
                                                                                          "true")
        assert IdempotentRequest.objects.get(key=key).response_status == 409


def test_a_400_does_not_take_the_key_and_the_corrected_body_reuses_it(world: World) -> None:
    """Not only unknown fields (tests/api/test_unknown_fields.py): any 400, here a value the operation refuses."""
    key = f"fix-{uuid.uuid4()}"
    refused = world.agent.post("/api/v1/sessions/", {"role": "no-such-role"}, HTTP_IDEMPOTENCY_KEY=key)
    assert (refused.status_code, refused.json()["code"]) == (400, "invalid")
    assert not IdempotentRequest.objects.filter(key=key).exists()

    corrected = world.agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY=key)

    assert corrected.status_code == 201, corrected.content
    replayed = world.agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY=key)
    assert (replayed.json()["id"], replayed["Idempotent-Replayed"]) == (corrected.json()["id"], "true")

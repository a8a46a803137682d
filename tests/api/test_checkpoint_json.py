"""The API gives a checkpoint's JSON values back as the agent wrote them, keys in the agent's order, on every read
(the columns are json: runs_app migration 0024)."""

import json
from typing import Any

from tests.api.conftest import World

STATE_TEXT = '{"zeta": {"yy": 1, "b": [2.5, null, {"kk": true, "a": "\\u00fc"}]}, "alpha": 3, "mid": "x"}'
CURSOR_TEXT = '{"node": "draft", "at": 3}'


def ordered(value: Any) -> str:
    return json.dumps(value)


def test_every_checkpoint_read_returns_the_state_in_the_order_written(world: World) -> None:
    body = (f'{{"run": {world.run.pk}, "lease_owner": "{world.run.lease_owner}", "parent": {world.checkpoint.pk}, '
            f'"state": {STATE_TEXT}, "cursor": {CURSOR_TEXT}, "pending_gate": "42"}}')
    created = world.agent.post_raw("/api/v1/checkpoints/", body)
    assert created.status_code == 201, created.content
    state, cursor = json.loads(STATE_TEXT), json.loads(CURSOR_TEXT)
    pk = created.json()["id"]
    detail = world.agent.get(f"/api/v1/checkpoints/{pk}/").json()
    lineage = world.agent.get(f"/api/v1/checkpoints/{pk}/lineage/")
    listed = world.agent.get(f"/api/v1/checkpoints/?run={world.run.pk}").json()["results"]
    newest = lineage.json()[0]
    for answer in (created.json(), detail, newest, next(c for c in listed if c["id"] == pk)):
        assert ordered(answer["state"]) == ordered(state) and ordered(answer["cursor"]) == ordered(cursor)
        assert answer["pending_gate"] == "42"
    assert detail == newest
    # The lineage carries the text the service wrote (non-ASCII as it is, as jsonb wrote it before).
    assert '"state":{"zeta": {"yy": 1, "b": [2.5, null, {"kk": true, "a": "ü"}]}, "alpha": 3, "mid": "x"},' \
        in lineage.content.decode()

"""The checkpoint write's hand-checked fast path must answer exactly as CheckpointInSerializer would.

`checkpoint_create_fast` accepts only bodies in the plain well-formed shape and returns None for anything
else (the serializer then accepts or words the error). Hypothesis generates bodies near that shape,
including the near misses (booleans, floats and strings for numbers, padded or NUL-bearing text, lone
surrogates, nulls for objects, unknown policies).
"""

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness.http.api_base import MAX_ID, MAX_INT
from harness.models import Project
from runs_app.api.checkpoints import (
    CheckpointInSerializer,
    CheckpointOutSerializer,
    checkpoint_create_fast,
    checkpoint_out,
)
from runs_app.models import Checkpoint, ResumePolicy
from runs_app.services import checkpoint_create
from tests import factories

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
good_ids = st.sampled_from([None, 1, 7, MAX_ID])
odd_ids = st.sampled_from([0, MAX_ID + 1, -1, True, False, "7", 7.0, "x", [], {}])
good_texts = st.sampled_from(["", "draft", "ünïcode — ok", "x" * 120])
odd_texts = st.sampled_from([" padded", "tail ", "\x00nul", "\ud800", "x" * 121, "x" * 201, None, 5, True, [], ""])
dicts = st.dictionaries(st.text(max_size=3), json_values, max_size=3)
odd_dicts = st.sampled_from([None, [], "x", 1, True])


def usually(good: Any, odd: Any) -> Any:
    """Mostly a valid value, sometimes a near miss: bodies stay close to the accepted shape."""
    return st.one_of(good, good, good, odd)


@st.composite
def bodies(draw: Any) -> Any:
    body: dict[str, Any] = {}
    for name in ("run", "task", "parent", "approval"):
        if draw(st.booleans()):
            body[name] = draw(usually(good_ids, odd_ids))
    for name in ("cursor", "state", "artifact_fingerprints"):
        if draw(st.booleans()):
            body[name] = draw(usually(dicts, odd_dicts))
    for name in ("label", "authority_ref"):
        if draw(st.booleans()):
            body[name] = draw(usually(good_texts, odd_texts))
    if draw(st.booleans()):
        body["pending_gate"] = draw(json_values)
    if draw(st.booleans()):
        body["resume_policy"] = draw(usually(st.sampled_from(ResumePolicy.values), st.sampled_from(["", "x", 1, None])))
    if draw(st.booleans()):
        body["schema_version"] = draw(usually(st.sampled_from([1, 2, MAX_INT]),
                                              st.sampled_from([0, MAX_INT + 1, True, 1.0, "2", None])))
    if draw(st.booleans()):
        body["lease_owner"] = draw(usually(st.sampled_from([None, "worker-1"]), odd_texts))
    if draw(st.integers(0, 9)) == 0:
        body["extra"] = draw(json_values)
    return body if draw(st.integers(0, 19)) else draw(json_values)


def serializer_answer(body: Any) -> dict[str, Any] | None:
    serializer = CheckpointInSerializer(data=body)
    return dict(serializer.validated_data) if serializer.is_valid() else None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bodies())
@example({"run": 1, "label": " padded"})
@example({"run": 1, "lease_owner": ""})
@example({"run": 1, "schema_version": 1.0})
@example({"run": True})
@example({"run": 1, "state": None})
@example({"run": 1, "authority_ref": "\ud800"})
@example({"run": 1, "extra": 1})
@example([{"run": 1}])
def test_the_fast_path_accepts_only_what_the_serializer_accepts_and_reads_it_the_same(body: Any) -> None:
    fast = checkpoint_create_fast(body)
    if fast is not None:
        assert serializer_answer(body) == fast


def test_the_plain_shapes_take_the_fast_path() -> None:
    body = {"run": 3, "parent": 9, "label": "draft", "state": {"text": "..."}, "cursor": {"node": "n"},
            "lease_owner": "worker-1"}
    assert checkpoint_create_fast(body) == serializer_answer(body)
    assert checkpoint_create_fast({"task": 4}) == serializer_answer({"task": 4})


@pytest.mark.django_db
def test_checkpoint_out_is_the_checkpoint_serializers_representation(project: Project) -> None:
    run = factories.make_run(project, task_id=factories.make_task(project).pk)
    root = checkpoint_create(project=project, run_id=run.pk, label="root", state={"a": [1, "two"]})
    child = checkpoint_create(project=project, run_id=run.pk, parent_id=root.pk, label="child",
                              cursor={"node": "n"}, pending_gate={"tool": "t"}, artifact_fingerprints={"d": "x"})
    for checkpoint in (root, child, Checkpoint.objects.get(pk=child.pk)):
        assert checkpoint_out(checkpoint) == CheckpointOutSerializer(checkpoint).data

"""The append's hand-checked fast path must answer exactly as ItemsAppendInSerializer would.

`items_append_fast` accepts only bodies in the plain well-formed shape and returns None for anything
else (the serializer then accepts or words the error). Hypothesis generates bodies near that shape,
including the near-misses (booleans and strings for numbers, nulls, blank roles, out-of-range ids).
"""

from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness.http.api_base import MAX_ID
from sessions_app.api import ItemOutSerializer, ItemsAppendInSerializer, item_out, items_append_fast
from sessions_app.models import ItemRole, SessionItem
from sessions_app.services import MAX_ITEMS_PER_APPEND

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
good_ids = st.sampled_from([None, 1, 7, MAX_ID])
odd_ids = st.sampled_from([0, MAX_ID + 1, -1, True, False, "7", 7.0, "x", [], {}])
roles = st.sampled_from(ItemRole.values)
odd_roles = st.sampled_from(["", "robot", " user", None, 1, True, ["user"]])


def usually(good: Any, odd: Any) -> Any:
    """Mostly a valid value, sometimes a near miss: bodies stay close to the accepted shape."""
    return st.one_of(good, good, good, odd)


@st.composite
def items(draw: Any) -> Any:
    item: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        item["role"] = draw(usually(roles, odd_roles))
    if draw(st.integers(0, 9)):
        item["content"] = draw(json_values)
    if draw(st.booleans()):
        item["run"] = draw(usually(good_ids, odd_ids))
    if draw(st.integers(0, 9)) == 0:
        item["extra"] = draw(json_values)
    return item if draw(st.integers(0, 19)) else draw(json_values)


@st.composite
def bodies(draw: Any) -> Any:
    body: dict[str, Any] = {}
    if draw(st.integers(0, 19)):
        body["items"] = draw(st.lists(items(), max_size=3)) if draw(st.integers(0, 19)) else draw(json_values)
    if draw(st.booleans()):
        body["expected_last_seq"] = draw(usually(st.sampled_from([None, 0, 5, MAX_ID]), odd_ids))
    return body if draw(st.integers(0, 19)) else draw(json_values)


def serializer_answer(body: Any) -> tuple[list[dict], Any] | None:
    serializer = ItemsAppendInSerializer(data=body)
    if not serializer.is_valid():
        return None
    data = serializer.validated_data
    return ([{"role": i["role"], "content": i["content"], "run_id": i["run"]} for i in data["items"]],
            data.get("expected_last_seq"))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bodies())
@example({"items": [{"role": "user", "content": 1, "run": MAX_ID + 1}]})
@example({"items": [{"role": "user", "content": 1}], "expected_last_seq": MAX_ID + 1})
@example({"items": [{"role": "user", "content": 1, "run": True}], "expected_last_seq": False})
@example({"items": [{"role": "user", "content": 1, "run": "7"}], "expected_last_seq": -1})
@example({"items": [{"role": "", "content": 1}]})
@example({"items": [{"role": "user"}, {"role": "user", "content": None}]})
@example({"items": []})
@example({"items": {"role": "user", "content": 1}})
@example([{"role": "user", "content": 1}])
def test_the_fast_path_accepts_only_what_the_serializer_accepts_and_reads_it_the_same(body: Any) -> None:
    fast = items_append_fast(body)
    if fast is not None:
        assert serializer_answer(body) == (fast[0], fast[1])


def test_the_plain_shapes_take_the_fast_path() -> None:
    body = {"items": [{"role": "user", "content": {"text": "hi"}}, {"role": "assistant", "content": "ok", "run": 3}],
            "expected_last_seq": 0}
    assert items_append_fast(body) == (
        [{"role": "user", "content": {"text": "hi"}, "run_id": None},
         {"role": "assistant", "content": "ok", "run_id": 3}], 0)
    too_many = {"items": [{"role": "user", "content": 1}] * (MAX_ITEMS_PER_APPEND + 1)}
    assert items_append_fast(too_many) is None
    assert serializer_answer(too_many) is None


def test_item_out_is_the_item_serializers_representation(db: Any, project: Any) -> None:
    from sessions_app.services import session_create, session_items_append

    session = session_create(project=project, role="writer", memory_policy="bounded")
    appended = session_items_append(project=project, session_id=session.pk,
                                    items=[{"role": "user", "content": {"a": [1, "two"]}}])
    stored = SessionItem.objects.get(pk=appended[0].pk)
    for item in (appended[0], stored):
        assert item_out(item) == ItemOutSerializer(item).data

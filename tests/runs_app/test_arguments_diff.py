"""What a reviewer changed, key by key (runs_app.presentation.arguments_diff): the one diff every page, the audit
entry and the webhook show."""

from runs_app.presentation.arguments_diff import ArgumentChange, ArgumentsDiff, ChangeKind, arguments_diff

A, R, C = ChangeKind.ADDED, ChangeKind.REMOVED, ChangeKind.CHANGED


def changes(before: object, after: object) -> list[tuple[str, str, object, object]]:
    return [(c.path, str(c.kind), c.before, c.after) for c in arguments_diff(before, after).changes]


def test_added_removed_and_changed_keys_are_named_with_their_values() -> None:
    asked, approved = {"chapter": 3, "to": "readers", "draft": True}, {"chapter": 4, "to": "readers", "colour": "red"}
    assert changes(asked, approved) == [
        ("chapter", C, 3, 4), ("colour", A, None, "red"), ("draft", R, True, None)]


def test_nested_objects_and_lists_give_paths_down_to_the_leaves() -> None:
    before = {"meta": {"author": "ada", "tags": ["a", "b"]}, "items": [{"id": 1, "qty": 2}]}
    after = {"meta": {"author": "bob", "tags": ["a", "c", "d"]}, "items": [{"id": 1, "qty": 5}]}
    assert changes(before, after) == [
        ("items[0].qty", C, 2, 5), ("meta.author", C, "ada", "bob"), ("meta.tags[1]", C, "b", "c"),
        ("meta.tags[2]", A, None, "d")]
    assert changes({"tags": ["a", "b"]}, {"tags": ["a"]}) == [("tags[1]", R, "b", None)]


def test_a_type_change_is_a_change_and_equal_json_is_none() -> None:
    assert changes({"n": 1}, {"n": "1"}) == [("n", C, 1, "1")]
    assert changes({"n": 1}, {"n": True}) == [("n", C, 1, True)]  # equal to Python's ==, not to a tool
    assert changes({"n": {"a": 1}}, {"n": [1]}) == [("n", C, {"a": 1}, [1])]
    assert not arguments_diff({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}).changed
    assert not arguments_diff({"a": 1}, None).changed  # nothing approved yet


def test_odd_keys_are_quoted_and_the_data_form_round_trips() -> None:
    diff = arguments_diff({"a.b": 1, "x": {"has space": 1}}, {"x": {"has space": 2}})
    assert [c.path for c in diff.changes] == ['"a.b"', 'x."has space"']
    data = diff.as_data()
    assert data == [{"path": '"a.b"', "kind": "removed", "before": 1},
                    {"path": 'x."has space"', "kind": "changed", "before": 1, "after": 2}]
    assert ArgumentsDiff.from_data(data) == diff
    assert ArgumentChange("n", A, None, {"é": 1}).after_text == '{"é": 1}'

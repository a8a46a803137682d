"""Selectors read; pages' display data is built beside the rows (runs_app.presentation), never set on them (issue 31,
part 4). Checked from the source: an attribute assigned on anything, or setattr, in a selector module is a display
field smuggled onto a model instance, which the templates would then read from the row."""

import ast
from pathlib import Path

import pytest

from tests.subprocesses import ROOT

SELECTOR_MODULES = sorted([*(ROOT / "runs_app" / "selectors").glob("*.py"), ROOT / "memory_app" / "selectors.py",
                           ROOT / "sessions_app" / "selectors.py"])


def _attribute_writes(source: str) -> list[str]:
    """Each `obj.name = ...` (or `+=`, or an annotated one) and `setattr(...)` in `source`, as its line's text."""
    found = []
    for node in sorted(ast.walk(ast.parse(source)), key=lambda n: getattr(n, "lineno", 0)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets for t in ast.walk(target)]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Attribute) and isinstance(t.ctx, ast.Store) for t in targets) or (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"):
            found.append(ast.unparse(node).splitlines()[0])
    return found


def test_the_checker_finds_an_attribute_set_on_a_row() -> None:
    assert _attribute_writes("for e in events:\n    e.data_json = dump(e.data)\n") == ["e.data_json = dump(e.data)"]
    assert _attribute_writes("latest[execution.node] = execution\n") == []  # reading an attribute is fine
    assert _attribute_writes("setattr(row, 'why', [])\nrow.n += 1\nrows = [r for r in q]\n") == [
        "setattr(row, 'why', [])", "row.n += 1"]


@pytest.mark.parametrize("path", SELECTOR_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_selector_sets_an_attribute_on_what_it_read(path: Path) -> None:
    assert _attribute_writes(path.read_text()) == []

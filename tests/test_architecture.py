"""The house's shape, checked from the source: no import loop, every import between apps points down the
layers (the kernel imports no feature app, nothing imports the wiring), the demo and the tests stay apart from
what ships.

Imports are read from the code (ast), every one of them: an import inside a function is still a
dependency (the services <-> tasks <-> resume <-> recovery loop of issue 13 was made of those).
"""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.subprocesses import ROOT

KERNEL = "harness"
WIRING = "config"
# The layers, bottom first: an app imports its own layer's modules and the layers below, never one above, nor a
# sibling in its own layer. Why this order (the domain's, DESIGN.md "The identity model"):
#   harness       the kernel: projects, tokens, transitions, audit, HTTP plumbing; knows no feature
#   sessions_app  the container every run lives in (a run's session is a foreign key; an item may name a run by
#                 its declared foreign key, and a session's timeline gets its runs from a source runs_app
#                 registers: sessions_app.timeline_sources)
#   runs_app      runs, tasks, checkpoints, approvals, effects, handoffs, and what a resume is (runs_app.resume)
#   memory_app    what is kept across runs, with their provenance (a run, an item); the context projection and
#   notify_app    its snapshots; telling people and agents about approvals (runs_app.signals). Neither needs the
#                 other. What the run inspector shows of memory is a panel memory registers (runs_app.inspector_panels)
#   bundles_app   a run (session, task) exported as one bundle and imported read-only (its memory, its audit
#                 entries); the worker's recovery pass skips what it imported
#   worker        the resume worker: carries out runs_app's resume with memory's context projection; hands
#   console       the approval page its dry run (runs_app.resume); the console's own pages read the apps below
#   demo          the demo scenario, on top of every app (and off in production)
#   config        the wiring: settings, URLconfs, the Celery app; names every app by string, imported by none
LAYERS: tuple[tuple[str, ...], ...] = (
    (KERNEL,), ("sessions_app",), ("runs_app",), ("memory_app", "notify_app"), ("bundles_app",), ("worker", "console"),
    ("demo",), (WIRING,),
)
FEATURE_APPS = tuple(app for layer in LAYERS[1:-1] for app in layer)
SHIPPED = tuple(app for layer in LAYERS for app in layer)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _shipped_files() -> Iterator[Path]:
    for package in SHIPPED:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def _imports(path: Path, module: str, known: set[str]) -> set[str]:
    """The first-party modules `path` imports (the module itself when `from m import name` names a
    function or class, the submodule when it names one)."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in known else base)
    return {name for name in found if name in known}


def _graph() -> dict[str, set[str]]:
    files = {_module_name(path): path for path in _shipped_files()}
    known = set(files)
    return {module: _imports(path, module, known) - {module} for module, path in files.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _arrows_up(graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...]) -> dict[str, list[str]]:
    """Each module's imports of another app that is not in a layer below its own (above, or a sibling)."""
    level = {app: at for at, layer in enumerate(layers) for app in layer}
    found: dict[str, list[str]] = {}
    for module, imported in graph.items():
        app = module.split(".")[0]
        up = sorted(name for name in imported
                    if (other := name.split(".")[0]) != app and level.get(other, -1) >= level[app])
        if up:
            found[module] = up
    return found


def test_the_checker_sees_the_whole_house() -> None:
    graph = _graph()
    assert {"harness.transitions", "runs_app.services", "worker.pipeline", "worker.steps.load",
            "notify_app.receivers", "config.settings"} <= set(graph)
    assert {app for layer in LAYERS for app in layer} == {path.parent.name for path in ROOT.glob("*/apps.py")} | {
        WIRING}  # every Django app has its layer
    assert "runs_app.services" in graph["worker.steps.bind_result"]  # a `from x import name` counts
    assert "worker.faults" in graph["worker.pipeline"]  # so does `from package import module`


def test_the_cycle_finder_finds_a_loop_made_of_lazy_imports() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_back_through_others() -> None:
    assert _cycles(_graph()) == []


def test_the_layer_checker_finds_an_arrow_up_and_one_between_siblings() -> None:
    layers = (("low",), ("left", "right"), ("high",))
    graph = {"high.a": {"low.x", "left.y"}, "left.y": {"low.x", "right.z"}, "right.z": {"high.a"}, "low.x": set()}
    assert _arrows_up(graph, layers) == {"left.y": ["right.z"], "right.z": ["high.a"]}


def test_every_import_between_apps_points_down_the_layers() -> None:
    assert _arrows_up(_graph(), LAYERS) == {}


def test_the_kernel_imports_no_feature_app() -> None:
    offending = {
        module: sorted(name for name in imported if name.split(".")[0] in FEATURE_APPS)
        for module, imported in _graph().items() if module.split(".")[0] == KERNEL
    }
    assert {module: names for module, names in offending.items() if names} == {}


@pytest.mark.parametrize("apart", ["demo", "tests"])
def test_what_ships_does_not_import_the_demo_or_the_tests(apart: str) -> None:
    files = {_module_name(path): path for path in _shipped_files()}
    known = set(files) | {_module_name(p) for p in (ROOT / "tests").rglob("*.py")}
    offending = {
        module: sorted(name for name in _imports(path, module, known) if name.split(".")[0] == apart)
        for module, path in files.items() if module.split(".")[0] != apart
    }
    assert {module: names for module, names in offending.items() if names} == {}

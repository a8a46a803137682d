"""Every environment variable is declared once (harness/env.py), and the declarations, the code and the
configuration page say the same thing.

The code is scanned, not trusted: every os.environ / os.getenv / env_* read of a literal name in the project's
Python files, and every $NAME / ${NAME...} a bin/* script takes from its environment, must be declared; each
declaration's readers (`read_by`) must really read it, and nothing else may. The test suite's own variables
(TEST_*, BENCH_*, RELIABILITY_*, PYTEST_*) are not configuration, and tests/ is not scanned; the benchmarks', the
reliability experiments' and bin/test's reads of real variables must be declared, but they are not readers a
user needs to know of.
"""

import ast
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from harness import env
from harness.env import DECLARED, SECTIONS, Derived, EnvVar, UndeclaredVariable
from tests.subprocesses import ROOT, child_env

TEST_ONLY = ("TEST_", "BENCH_", "RELIABILITY_", "PYTEST_")
NOT_SCANNED = {"tests", "var", "node_modules", "site", "test-artifacts"}
# Read, but only by the suite's and the measurements' tools: their names must be declared, they need not be readers.
TOOLING = ("bench/", "reliability/", "bin/test", "bin/bench", "bin/reliability", "bin/services")
READERS = {"env_str", "env_bool", "env_int", "env_list", "env_json_object", "env_secret"}


def _is_environ(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name)
            and node.value.id == "os")


def _literal(args: list[ast.expr]) -> str | None:
    if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
        return args[0].value
    return None


def _reads_the_environment(func: ast.expr) -> bool:
    """os.environ.get / os.environ.setdefault / os.getenv, or one of harness.env's readers."""
    if isinstance(func, ast.Name):
        return func.id in READERS
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr in ("get", "setdefault"):
        return _is_environ(func.value)
    if func.attr == "getenv":
        return isinstance(func.value, ast.Name) and func.value.id == "os"
    return func.attr in READERS


def _python_reads(source: str) -> set[str]:
    """The names a module reads from the environment: os.environ.get/setdefault, os.environ[...], `in
    os.environ`, os.getenv, and harness.env's readers, each with a literal name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        name = None
        if isinstance(node, ast.Call) and _reads_the_environment(node.func):
            name = _literal(node.args)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value):
            name = _literal([node.slice])
        elif isinstance(node, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops) \
                and any(_is_environ(c) for c in node.comparators):
            name = _literal([node.left])
        if name is not None:
            found.add(name)
    return found


_REFERENCE = re.compile(r"\$\{?([A-Z][A-Z0-9_]*)")
_WITH_DEFAULT = re.compile(r"\$\{([A-Z][A-Z0-9_]*):?[-=?+]")
_ASSIGNED = re.compile(r"(?:^|\s)(?:export\s+)?([A-Z][A-Z0-9_]*)=")


def _shell_reads(source: str) -> set[str]:
    """The names a script takes from its environment: ${NAME:-...} (and :=, :?, -), or $NAME / ${NAME} that the
    script never assigns itself (ROLES=..., then $ROLES, is the script's own variable)."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))
    assigned = set(_ASSIGNED.findall(code))
    return set(_WITH_DEFAULT.findall(code)) | (set(_REFERENCE.findall(code)) - assigned)


def _scanned_files() -> list[Path]:
    files = [path for path in ROOT.rglob("*.py")
             if not any(part.startswith(".") or part in NOT_SCANNED for part in path.relative_to(ROOT).parts)]
    return sorted(files) + sorted(path for path in (ROOT / "bin").iterdir() if path.is_file())


def _reads() -> dict[str, set[str]]:
    """Every name read, with the files (paths from the root) that read it. NAME_FILE counts as NAME's read
    when NAME is a declared secret (bin/serve checks `${DATABASE_URL:-}${DATABASE_URL_FILE:-}`)."""
    reads: dict[str, set[str]] = defaultdict(set)
    for path in _scanned_files():
        relative = path.relative_to(ROOT).as_posix()
        text = path.read_text()
        names = _python_reads(text) if path.suffix == ".py" else _shell_reads(text)
        for name in names:
            stem = name.removesuffix("_FILE")
            if stem != name and stem in DECLARED and DECLARED[stem].secret:
                name = stem
            if not name.startswith(TEST_ONLY):
                reads[name].add(relative)
    return reads


def _covers(entry: str, path: str) -> bool:
    return path == entry or (entry.endswith("/") and path.startswith(entry))


# The scan itself, on what it must find and what it must not.

def test_the_python_scan_finds_every_form_of_read() -> None:
    source = """
import os
from harness.env import env_int
a = os.environ.get("A_GET"); b = os.environ["A_ITEM"]; c = os.getenv("A_GETENV")
os.environ.setdefault("A_SETDEFAULT", "x"); d = "A_IN" in os.environ; e = env_int("A_READER")
os.environ["NOT_A_READ"] = "1"; f = {**os.environ, "NOT_EITHER": "1"}
"""
    assert _python_reads(source) == {"A_GET", "A_ITEM", "A_GETENV", "A_SETDEFAULT", "A_IN", "A_READER"}


def test_the_shell_scan_tells_the_environment_from_the_scripts_own_variables() -> None:
    source = 'ROLES=",${HARNESS_ROLES:-web},"\nCORES=$(nproc)\nBIND=${BIND:-x}\necho $ROLES $CORES $BIND $PORT\n' \
             '# $IN_A_COMMENT\nexport A=1 B=${B_READ:-2}\n'
    assert _shell_reads(source) == {"HARNESS_ROLES", "BIND", "PORT", "B_READ"}


# Both directions: the code against the declarations.

def test_every_name_read_is_declared() -> None:
    undeclared = {name: sorted(paths) for name, paths in _reads().items() if name not in DECLARED}
    assert not undeclared, f"declare these in harness/env.py (then run `{env.WRITE_COMMAND}`): {undeclared}"


def test_every_declared_reader_reads_its_variable() -> None:
    reads = _reads()
    missing = {name: entries for name, var in DECLARED.items()
               if (entries := [entry for entry in var.read_by
                               if not any(_covers(entry, path) for path in reads[name])])}
    assert not missing, f"read_by names these, but they do not read the variable: {missing}"


def test_no_file_reads_a_variable_its_declaration_does_not_name() -> None:
    unlisted = {name: paths for name, found in _reads().items() if name in DECLARED
                if (paths := sorted(path for path in found if not path.startswith(TOOLING)
                                    and not any(_covers(entry, path) for entry in DECLARED[name].read_by)))}
    assert not unlisted, f"add these files to the variables' read_by in harness/env.py: {unlisted}"


def test_the_client_reads_only_declared_names() -> None:
    """client/ imports nothing of the server (tests/test_architecture.py), so its names are literals of its own."""
    client = {name for name, paths in _reads().items() if any(path.startswith("client/") for path in paths)}
    assert client == {"HARNESS_URL", "HARNESS_TOKEN", "HARNESS_PUSH_URL"}
    assert all("client/" in DECLARED[name].read_by for name in client)


def _shell_form(default: object) -> str:
    if isinstance(default, bool):
        return "1" if default else "0"
    if isinstance(default, tuple):
        return ",".join(default)
    return str(default)


SCRIPT_ONLY = [var for var in DECLARED.values()
               if all(entry.startswith("bin/") for entry in var.read_by) and not isinstance(var.default, Derived)]


@pytest.mark.parametrize("var", SCRIPT_ONLY, ids=[var.name for var in SCRIPT_ONLY])
def test_a_script_only_variable_defaults_in_its_script_to_the_declared_default(var: EnvVar) -> None:
    """A script cannot ask harness/env.py for its default, so its ${NAME:-default} is held to the declaration."""
    for entry in var.read_by:
        defaults = set(re.findall(r"\$\{" + var.name + r":-([^}]*)\}", (ROOT / entry).read_text()))
        assert defaults == {_shell_form(var.default)}, entry


# The declarations themselves.

@pytest.mark.parametrize("var", DECLARED.values(), ids=list(DECLARED))
def test_a_declaration_is_well_formed(var: EnvVar) -> None:
    assert var.section in SECTIONS
    assert var.doc and "\n" not in var.doc
    assert var.read_by and all((ROOT / entry).exists() for entry in var.read_by)
    assert var.minimum is None or var.kind == "int"
    if isinstance(var.default, Derived):
        assert var.kind not in ("json", "secret")  # their readers take no derived default
        return
    kinds = {"str": str, "secret": str, "json": str, "bool": bool, "int": int, "list": tuple}
    assert type(var.default) is kinds[var.kind] or (var.default is None and var.kind in ("str", "secret"))
    if var.kind == "int" and var.minimum is not None:
        assert isinstance(var.default, int) and var.default >= var.minimum


# The page.

def test_the_configuration_page_is_the_generated_text() -> None:
    page = env.PAGE.read_text()
    assert page.count(env.BEGIN) == 1 and page.count(env.END) == 1
    generated = page.split(env.BEGIN, 1)[1].split(env.END, 1)[0].removeprefix("\n")
    assert generated == env.markdown(), (
        f"docs/operations/configuration.md and harness/env.py's declarations differ: run `{env.WRITE_COMMAND}`")


def test_the_page_lists_every_declared_variable_once() -> None:
    generated = env.markdown()
    for name in DECLARED:
        assert generated.count(f"| `{name}` |") == 1, name


def test_write_replaces_only_the_generated_text() -> None:
    page = f"# Title\n\nprose\n\n{env.BEGIN}\nstale table\n{env.END}\n\nmore prose\n"
    assert env.page_with_markdown(page) == f"# Title\n\nprose\n\n{env.BEGIN}\n{env.markdown()}{env.END}\n\nmore prose\n"
    with pytest.raises(ValueError, match="markers"):
        env.page_with_markdown("# no markers\n")


def test_markdown_prints_the_generated_text() -> None:
    done = subprocess.run([sys.executable, "-m", "harness.env", "--markdown"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == env.markdown()


# The readers.

@pytest.fixture
def declared(monkeypatch: pytest.MonkeyPatch):
    """Declares test variables for the duration of one test; none of them is set."""
    def declare(name: str, kind: env.Kind, default: object, **extra: object) -> None:
        monkeypatch.setitem(DECLARED, name, EnvVar(name, kind, default, "A test's.", "process", **extra))
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(f"{name}_FILE", raising=False)
    return declare


@pytest.mark.parametrize("reader", [env.env_str, env.env_bool, env.env_int, env.env_list, env.env_json_object,
                                    env.env_secret])
def test_a_reader_refuses_an_undeclared_name(reader, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HC_NEVER_DECLARED", "1")
    with pytest.raises(UndeclaredVariable, match="HC_NEVER_DECLARED is not declared"):
        reader("HC_NEVER_DECLARED")


def test_a_reader_refuses_a_name_declared_as_another_kind() -> None:
    with pytest.raises(UndeclaredVariable, match="declared as int, not read as bool"):
        env.env_bool("HARNESS_MAX_JSON_DEPTH")


def test_unset_is_the_declared_default_and_set_is_parsed(declared, monkeypatch: pytest.MonkeyPatch) -> None:
    declared("HC_STR", "str", "plain")
    declared("HC_BOOL", "bool", True)
    declared("HC_INT", "int", 7, minimum=2)
    declared("HC_LIST", "list", ("a", "b"))
    declared("HC_JSON", "json", '{"k": 1}')
    assert (env.env_str("HC_STR"), env.env_bool("HC_BOOL"), env.env_int("HC_INT"), env.env_list("HC_LIST"),
            env.env_json_object("HC_JSON")) == ("plain", True, 7, ["a", "b"], {"k": 1})
    for name, value in {"HC_STR": "other", "HC_BOOL": "off", "HC_INT": "3", "HC_LIST": " x, ,y ",
                        "HC_JSON": '{"j": null}'}.items():
        monkeypatch.setenv(name, value)
    assert (env.env_str("HC_STR"), env.env_bool("HC_BOOL"), env.env_int("HC_INT"), env.env_list("HC_LIST"),
            env.env_json_object("HC_JSON")) == ("other", False, 3, ["x", "y"], {"j": None})
    monkeypatch.setenv("HC_JSON", "")  # empty is unset, as HARNESS_TOOL_ADAPTERS= always meant
    assert env.env_json_object("HC_JSON") == {"k": 1}


def test_a_bad_value_is_improperly_configured_naming_the_variable(declared, monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    declared("HC_INT", "int", 7, minimum=2)
    declared("HC_BOOL", "bool", False)
    declared("HC_JSON", "json", "{}")
    for name, value, message in [("HC_INT", "seven", "HC_INT='seven' is not an integer"),
                                 ("HC_INT", "1", "HC_INT=1 is below the minimum of 2"),
                                 ("HC_BOOL", "maybe", "HC_BOOL='maybe' is not a boolean"),
                                 ("HC_JSON", "{", "HC_JSON is not JSON"),
                                 ("HC_JSON", "[]", "HC_JSON must be a JSON object")]:
        monkeypatch.setenv(name, value)
        with pytest.raises(ImproperlyConfigured, match=re.escape(message)):
            {"HC_INT": env.env_int, "HC_BOOL": env.env_bool, "HC_JSON": env.env_json_object}[name](name)


def test_a_derived_default_is_passed_by_the_reader_and_only_then(declared, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    declared("HC_DERIVED", "bool", Derived("the opposite of DEBUG"))
    declared("HC_FIXED", "bool", False)
    assert env.env_bool("HC_DERIVED", derived=True) is True
    monkeypatch.setenv("HC_DERIVED", "0")
    assert env.env_bool("HC_DERIVED", derived=True) is False
    with pytest.raises(UndeclaredVariable, match="pass derived="):
        env.env_bool("HC_DERIVED")
    with pytest.raises(UndeclaredVariable, match="do not pass derived="):
        env.env_bool("HC_FIXED", derived=True)


def test_a_required_variable_unset_is_improperly_configured(declared) -> None:
    declared("HC_REQUIRED", "str", None)
    with pytest.raises(ImproperlyConfigured, match="HC_REQUIRED is required"):
        env.env_str("HC_REQUIRED")


def test_settings_take_the_declared_default_and_name_a_bad_value() -> None:
    """Through config/settings.py itself: unset, the declaration's default; a bad int stops the process."""
    code = "import django; django.setup(); from django.conf import settings; print(settings.HARNESS_MAX_JSON_DEPTH)"
    environment = child_env()
    environment.pop("HARNESS_MAX_JSON_DEPTH", None)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(DECLARED["HARNESS_MAX_JSON_DEPTH"].default)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**environment, "HARNESS_MAX_JSON_DEPTH": "2"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "ImproperlyConfigured: HARNESS_MAX_JSON_DEPTH=2 is below the minimum of 4." in done.stderr

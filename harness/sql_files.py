"""SQL functions and triggers kept as files, one file per version of each object, loaded by migrations.

Layout: `<app>/sql/<object>.v<N>.sql` for a function, `<app>/sql/<object>.trigger.v<N>.sql` for a trigger (a
function and a trigger may share a name). The migration that installs version N loads that file; the file with
the highest N is the object's current definition (`latest`), and tests/test_sql_files.py checks that the
migrated database says exactly what those files say, so an edit to a file without a migration fails.

Why files rather than strings in migrations: a reader finds an object's current SQL in one place, a change
is a new file (a diff against the previous version reads as the change), and no migration imports another
migration or splices its text.

The files are executed as written on a raw cursor (their `%` are not placeholders). `{schema}` in a file is
the migrating connection's schema, quoted: a SECURITY DEFINER function pins its search_path to it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

from django.db import migrations

_VERSIONED = re.compile(r"^(?P<object>\w+(?:\.trigger)?)\.v(?P<version>[1-9][0-9]*)\.sql$")


@dataclass(frozen=True)
class SQLFile:
    """One version of one object: `<app>/sql/<name>`."""

    app: str
    name: str

    @property
    def path(self) -> Path:
        return sql_dir(self.app) / self.name

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")


def sql_dir(app: str) -> Path:
    """The `sql/` folder beside the app's package (read at migration time, so no copy can drift)."""
    module_file = import_module(app).__file__
    if module_file is None:  # a namespace package has no folder of its own to read from
        raise ValueError(f"{app} is not a regular package")
    return Path(module_file).parent / "sql"


def load(app: str, name: str) -> SQLFile:
    """The file `<app>/sql/<name>`; it must exist and be named `<object>[.trigger].v<N>.sql`."""
    if not _VERSIONED.match(name):
        raise ValueError(f"{name!r} is not named <object>[.trigger].v<N>.sql")
    sql_file = SQLFile(app, name)
    if not sql_file.path.is_file():
        raise FileNotFoundError(sql_file.path)
    return sql_file


def versions(app: str) -> dict[str, list[tuple[int, SQLFile]]]:
    """Every versioned file of the app, by object (`name` or `name.trigger`), oldest version first."""
    found: dict[str, list[tuple[int, SQLFile]]] = {}
    for path in sorted(sql_dir(app).glob("*.sql")):
        match = _VERSIONED.match(path.name)
        if match is None:
            raise ValueError(f"{path} is not named <object>[.trigger].v<N>.sql")
        found.setdefault(match["object"], []).append((int(match["version"]), SQLFile(app, path.name)))
    return {obj: sorted(files, key=lambda pair: pair[0]) for obj, files in found.items()}


def latest(app: str) -> dict[str, SQLFile]:
    """Each object's current definition: its highest version."""
    return {obj: files[-1][1] for obj, files in versions(app).items()}


Statement = SQLFile | str


def execute(cursor: Any, statements: Sequence[Statement]) -> None:
    """Run files (and plain SQL strings, e.g. DROPs) in order on a raw cursor, `{schema}` filled in."""
    schema: str | None = None
    for statement in statements:
        sql = statement.text() if isinstance(statement, SQLFile) else statement
        if "{schema}" in sql:
            if schema is None:
                cursor.execute("SELECT quote_ident(current_schema())")
                (schema,) = cursor.fetchone()
            sql = sql.replace("{schema}", schema)
        cursor.execute(sql)


def _runner(statements: Sequence[Statement]) -> Callable[[Any, Any], None]:
    def run(apps: Any, schema_editor: Any) -> None:
        with schema_editor.connection.cursor() as cursor:
            execute(cursor, statements)

    return run


class InstallSQL(migrations.RunPython):
    """RunPython over SQL files and strings; keeps `forward` so tests can tell which migration installs which file."""

    def __init__(self, forward: Sequence[Statement], reverse: Sequence[Statement] | None) -> None:
        self.forward = tuple(forward)
        self.reverse = tuple(reverse) if reverse is not None else None
        super().__init__(_runner(self.forward), _runner(self.reverse) if self.reverse is not None else None)


def install(*forward: Statement, reverse: Sequence[Statement] | None = None) -> InstallSQL:
    """A migration operation running `forward` (files or SQL), and `reverse` when migrating back (None:
    irreversible)."""
    return InstallSQL(forward, reverse)

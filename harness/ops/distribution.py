"""The plan for PostgreSQL past one primary: every table as Citus would hold it, distributed by project.

    python -m harness.ops.distribution --markdown    # the map, from the database DATABASE_URL names
    python -m harness.ops.distribution --write       # ... rewritten into docs/operations/sharding.md

Nothing here runs Citus. The classification below is the plan's one source (docs/operations/sharding.md explains
it); the columns, unique constraints and foreign keys are read from the live schema (pg_catalog), so a migration
that adds a table, a constraint or a key changes the page, and tests/ops/test_distribution.py fails until the new
table is classified and the page is written again.

The kinds, as Citus names them:
- distributed (by `project_id`): the rows agents' calls and runs' work write, which grow with traffic. Every
  table of one project lands on the same shard (co-located), so a statement that names its project runs on one
  node. A table without the column yet is marked "to add": the move adds it (copied from the parent row).
- reference: a copy on every node, for what is read before the project is known (a token, a user) or joined
  from every shard, and written rarely by people (projects, memberships, policies).
- local: the framework's own bookkeeping, kept on the coordinator only.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Kind = Literal["distributed", "reference", "local"]
DIST_COLUMN = "project_id"


@dataclass(frozen=True)
class Placement:
    kind: Kind
    why: str


def _d(why: str) -> Placement:
    return Placement("distributed", why)


def _r(why: str) -> Placement:
    return Placement("reference", why)


def _l(why: str) -> Placement:
    return Placement("local", why)


# Every table of the migrated schema. tests/ops/test_distribution.py fails on a table missing here, or named here
# and gone from the schema.
TABLES: dict[str, Placement] = {
    # harness: tenancy, tokens, audit, idempotency
    "harness_project": _r("the tenant itself; every distributed row's project_id points at it"),
    "harness_membership": _r("who may see which project: read with the user, before a project is chosen"),
    "harness_apitoken": _r("looked up by its hash before the project is known (the token names it)"),
    "harness_auditentry": _d("each project's own hash chain (harness_audit_chain): one shard per chain"),
    "harness_auditchainhead": _d("the head of a project's chain, locked by the append beside its entry"),
    "harness_auditverification": _d("a chain's verification record"),
    "harness_idempotentrequest": _d("the key's reply is written in the same statement as the append it answers; "
                                    "keyed by token, which names one project"),
    "harness_importedrow": _r("which local rows an import wrote: the read-only guard (a trigger on every session, "
                              "item, run and checkpoint write) reads it by id, so every shard needs its copy; "
                              "written only by an import"),
    "harness_workerheartbeat": _l("one row per worker host, read by the health probe"),
    # sessions
    "sessions_app_session": _d("a session and its counter, bumped by every append"),
    "sessions_app_sessionitem": _d("the largest table: a session's items, appended beside the session's row"),
    # runs
    "runs_app_run": _d("a run, its lease and version"),
    "runs_app_runevent": _d("a run's events, numbered by the run's counter in the same statement"),
    "runs_app_task": _d("multi-day work of a project"),
    "runs_app_taskstateversion": _d("a task's state history"),
    "runs_app_checkpoint": _d("a run's checkpoints and their lineage"),
    "runs_app_checkpointwrite": _d("LangGraph's pending writes of a checkpoint"),
    "runs_app_nodeexecution": _d("a node's attempts within a run"),
    "runs_app_externaleffect": _d("idempotency keys and receipts of a run's side effects"),
    "runs_app_approvalrequest": _d("an approval and its decision"),
    "runs_app_approvalvote": _d("a reviewer's vote on an approval (quorum)"),
    "runs_app_standingapproval": _d("a standing rule, created by a decision and read by the next request"),
    "runs_app_humanquestion": _d("an agent's question to a person"),
    "runs_app_handoff": _d("a handoff between a project's runs"),
    "runs_app_approvalpolicy": _r("who must approve what: a project's settings, written by people"),
    "runs_app_approvalpolicy_eligible_groups": _r("a policy's groups (with the policy)"),
    "runs_app_approvalexpirydefault": _r("a project's approval expiry settings"),
    "runs_app_retentionpolicy": _r("a project's retention settings"),
    "runs_app_reviewergroup": _r("a project's reviewer groups"),
    "runs_app_reviewergroup_members": _r("a group's members (with the group)"),
    "runs_app_toolschema": _r("a project's tool schemas, read by every resume of the tool"),
    # memory
    "memory_app_memoryrecord": _d("a project's long-term memory"),
    "memory_app_contextsnapshot": _d("what a run's model was given"),
    "memory_app_memorywritepolicy": _r("a project's memory write policy"),
    # notifications
    "notify_app_projectnotification": _d("a project's notifications"),
    "notify_app_webhookdelivery": _d("one delivery of a project's event"),
    "notify_app_webhookattempt": _d("an attempt of a delivery"),
    "notify_app_webhook": _r("a project's webhook endpoints, written by people"),
    # bundles
    "bundles_app_importedbundle": _d("a bundle imported into a project"),
    # Django and its auth
    "auth_user": _r("console users, read by every session and decision"),
    "auth_group": _r("roles"),
    "auth_permission": _r("Django's permissions"),
    "auth_group_permissions": _r("Django's permissions"),
    "auth_user_groups": _r("a user's roles"),
    "auth_user_user_permissions": _r("Django's permissions"),
    "django_content_type": _r("Django's model registry (auth_permission points at it)"),
    "django_migrations": _l("the schema's history; Citus propagates DDL from the coordinator"),
    "django_session": _l("console logins: small, keyed by session key"),
    "django_admin_log": _l("the admin's log"),
}


# Distributed tables without project_id yet that a hot statement writes on its own (not beside a parent row it
# routes), so the statement cannot name the project until the column exists. The move adds the column and the
# filter together; docs/operations/sharding.md lists each with its change. tests/ops/test_colocation.py allows
# exactly these (any other unrouted statement fails).
PENDING_TABLES: dict[str, str] = {
    "harness_idempotentrequest": "the key's reservation (an INSERT keyed by principal and key) and its settlement "
                                 "(an UPDATE by id) gain `project_id`, the token's project, and the unique key "
                                 "becomes (project_id, principal, key)",
}


@dataclass(frozen=True)
class Unique:
    table: str
    name: str
    columns: tuple[str, ...]
    partial: bool


@dataclass(frozen=True)
class ForeignKey:
    table: str
    name: str
    columns: tuple[str, ...]
    target: str
    target_columns: tuple[str, ...]


@dataclass(frozen=True)
class Schema:
    tables: tuple[str, ...]
    with_column: frozenset[str]  # tables that have project_id
    uniques: tuple[Unique, ...]
    foreign_keys: tuple[ForeignKey, ...]


_TABLES_SQL = """
SELECT c.relname, EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = %s
                                                        AND NOT a.attisdropped)
  FROM pg_class c
 WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
 ORDER BY c.relname
"""
# Unique constraints and unique indexes (a partial one too: Citus asks the same of it), with their columns.
_UNIQUES_SQL = """
SELECT t.relname, i.relname, x.indpred IS NOT NULL,
       ARRAY(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)
               JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
 WHERE x.indisunique AND t.relnamespace = current_schema()::regnamespace
 ORDER BY t.relname, i.relname
"""
_FOREIGN_KEYS_SQL = """
SELECT t.relname, c.conname,
       ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
               JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n),
       r.relname,
       ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, n)
               JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.n)
  FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
 WHERE c.contype = 'f' AND t.relnamespace = current_schema()::regnamespace
 ORDER BY t.relname, c.conname
"""


def read_schema(cursor: Any) -> Schema:
    """The current schema's tables, unique constraints and foreign keys (a DB-API cursor on the database)."""
    cursor.execute(_TABLES_SQL, [DIST_COLUMN])
    rows = cursor.fetchall()
    cursor.execute(_UNIQUES_SQL)
    uniques = tuple(Unique(t, n, tuple(cols), bool(p)) for t, n, p, cols in cursor.fetchall())
    cursor.execute(_FOREIGN_KEYS_SQL)
    keys = tuple(ForeignKey(t, n, tuple(c), r, tuple(rc)) for t, n, c, r, rc in cursor.fetchall())
    return Schema(tuple(r[0] for r in rows), frozenset(r[0] for r in rows if r[1]), uniques, keys)


def unclassified(schema: Schema) -> tuple[list[str], list[str]]:
    """(tables in the schema that TABLES does not place, tables TABLES places that the schema does not have)."""
    return sorted(set(schema.tables) - set(TABLES)), sorted(set(TABLES) - set(schema.tables))


def distributed_tables() -> frozenset[str]:
    return frozenset(t for t, p in TABLES.items() if p.kind == "distributed")


def unique_breaks(schema: Schema, u: Unique) -> bool:
    """Citus enforces a unique constraint of a distributed table only if it includes the distribution column."""
    return TABLES.get(u.table, _l("")).kind == "distributed" and DIST_COLUMN not in u.columns


def foreign_key_verdict(key: ForeignKey) -> str:
    """What Citus makes of a foreign key, given where its two tables go ('' when it holds as it is)."""
    src, dst = TABLES.get(key.table, _l("")).kind, TABLES.get(key.target, _l("")).kind
    if src == "distributed" and dst == "distributed":
        if DIST_COLUMN in key.columns:
            return ""
        return f"between distributed tables: becomes ({DIST_COLUMN}, {', '.join(key.columns)}) -> " \
               f"{key.target} ({DIST_COLUMN}, {', '.join(key.target_columns)})"
    if dst == "reference" and src in ("distributed", "reference", "local"):
        return ""
    if src == "reference" and dst == "distributed":
        return "from a reference table to a distributed one: not supported; drop it (the service keeps the rule)"
    if src == "local" and dst == "local":
        return ""
    return f"between a {src} and a {dst} table: not supported; drop it (the service keeps the rule)"


# --- which statements a sharded database would run on one node ---------------------------------------------

_KEYWORDS = frozenset({"where", "set", "on", "join", "left", "right", "inner", "outer", "full", "cross", "using",
                       "select", "values", "returning", "order", "group", "limit", "natural", "lateral", "with",
                       "as", "and", "or", "offset", "for", "union", "having", "window", "default", "conflict"})
_REFERENCE = re.compile(r"\b(?:from|join|update|into)\s+(?:only\s+)?([a-z_][a-z0-9_]*)"
                        r"(?:\s+(?:as\s+)?([a-z_][a-z0-9_]*))?")
_OP = r"(?:=|<>|\bin\b|\bis\s+not\s+distinct\s+from\b)"


def _predicate(prefix: str) -> re.Pattern[str]:
    """`<prefix>project_id` compared with something (either side of the comparison)."""
    column = rf"{prefix}{DIST_COLUMN}\b"
    return re.compile(rf"{column}\s*{_OP}|{_OP}\s*(?:any\s*\(\s*)?{column}")


# `project_id` unqualified (a trigger's NEW.project_id / OLD.project_id count as unqualified: they are the row's).
_UNQUALIFIED = _predicate(r"(?<![\w.])(?:(?:new|old)\.)?")
_COLUMN_LIST = re.compile(rf"^\s*\w*\s*(?:as\s+\w+\s*)?\([^)]*\b{DIST_COLUMN}\b")


@dataclass(frozen=True)
class Touch:
    """A distributed table one statement touches, and whether the statement routes it to one project's shard."""

    table: str
    routed: bool  # filtered (or, for an INSERT, given) by project_id
    anchored: bool = False  # no project_id column yet: only in a statement that routes a parent table


def statement_touches(sql: str, with_column: frozenset[str]) -> list[Touch]:
    """The distributed tables `sql` touches, each with whether the statement names its `project_id`.

    A table is routed when the statement compares `<its alias or name>.project_id` (`=`, `IN`, `= ANY`), or,
    unqualified, compares `project_id` in the text that follows the table up to the next table it names (`UPDATE t
    SET .. WHERE id = %s AND project_id = %s`); an INSERT when its column list gives `project_id`. A column only
    selected does not route. A distributed table that has no `project_id`
    yet (TABLES' "to add") is anchored when the same statement routes another table: its rows go where their
    parent's row goes once the column is added and copied from the parent.
    """
    text = re.sub(r"--[^\n]*", " ", sql).replace('"', "").lower()
    refs = [(m.start(), m.group(1), m.group(2)) for m in _REFERENCE.finditer(text)]
    refs = [(pos, table, alias if alias and alias not in _KEYWORDS else None) for pos, table, alias in refs
            if TABLES.get(table, _l("")).kind == "distributed"]
    touches: list[Touch] = []
    for n, (pos, table, alias) in enumerate(refs):
        if table not in with_column:
            touches.append(Touch(table, routed=False))
            continue
        end = refs[n + 1][0] if n + 1 < len(refs) else len(text)
        segment = text[pos:end]
        if segment.startswith("into"):  # an INSERT is routed by the project_id it gives the row
            touches.append(Touch(table, routed=bool(_COLUMN_LIST.match(segment[4:].lstrip()[len(table):]))))
            continue
        qualified = any(_predicate(rf"(?<![\w.]){re.escape(name)}\.").search(text)
                        for name in filter(None, (table, alias)))
        touches.append(Touch(table, routed=qualified or bool(_UNQUALIFIED.search(segment))))
    if any(t.routed for t in touches):
        touches = [Touch(t.table, t.routed, anchored=t.table not in with_column) for t in touches]
    return touches


def unrouted(sql: str, with_column: frozenset[str]) -> list[str]:
    """The distributed tables `sql` touches without naming their project (empty: it runs on one shard)."""
    return sorted({t.table for t in statement_touches(sql, with_column) if not t.routed and not t.anchored})


def _code(names: tuple[str, ...]) -> str:
    return ", ".join(names)


def markdown(schema: Schema) -> str:
    """The page's generated text (the markers not included)."""
    lines = [f"<!-- Generated from harness/ops/distribution.py and the migrated schema by `{WRITE_COMMAND}`: "
             "edit TABLES there, not this text. -->", "",
             "### Every table", "",
             "| table | kind | `project_id` | why |", "| --- | --- | --- | --- |"]
    for table in schema.tables:
        place = TABLES.get(table, Placement("local", "**not classified**"))
        column = "-" if place.kind != "distributed" else "yes" if table in schema.with_column else "**to add**"
        lines.append(f"| `{table}` | {place.kind} | {column} | {place.why} |")
    counts = {k: sum(1 for t in schema.tables if TABLES.get(t, _l("")).kind == k)
              for k in ("distributed", "reference", "local")}
    to_add = sorted(t for t in schema.tables if TABLES.get(t, _l("")).kind == "distributed"
                    and t not in schema.with_column)
    lines += ["", f"{len(schema.tables)} tables: {counts['distributed']} distributed ({len(to_add)} of them without "
              f"`project_id` yet), {counts['reference']} reference, {counts['local']} local.", ""]
    broken = [u for u in schema.uniques if unique_breaks(schema, u)]
    lines += ["### Unique constraints the distribution breaks", "",
              f"A distributed table's unique constraint must include `{DIST_COLUMN}`. These {len(broken)} do not "
              f"(the primary keys among them become `({DIST_COLUMN}, id)`; the others gain `{DIST_COLUMN}` "
              "as their first column, which keeps their meaning: every one is unique within a project's rows "
              "already, since the rows they index belong to one project).", "",
              "| table | constraint or index | columns |", "| --- | --- | --- |"]
    lines += [f"| `{u.table}` | `{u.name}`{' (partial)' if u.partial else ''} | {_code(u.columns)} |" for u in broken]
    verdicts = [(k, foreign_key_verdict(k)) for k in schema.foreign_keys]
    broken_keys = [(k, v) for k, v in verdicts if v]
    lines += ["", "### Foreign keys the distribution breaks", "",
              f"{len(broken_keys)} of the schema's {len(verdicts)} foreign keys; the others point at a reference "
              "table (allowed from any table) or already carry the distribution column.", "",
              "| table | key | columns -> target | what it becomes |", "| --- | --- | --- | --- |"]
    lines += [f"| `{k.table}` | `{k.name}` | {_code(k.columns)} -> `{k.target}` | {v} |" for k, v in broken_keys]
    return "\n".join(lines) + "\n"


PAGE = Path(__file__).resolve().parent.parent.parent / "docs" / "operations" / "sharding.md"
BEGIN = "<!-- citus:begin -->"
END = "<!-- citus:end -->"
WRITE_COMMAND = "python -m harness.ops.distribution --write"


def page_with_markdown(page: str, schema: Schema) -> str:
    head, begin, rest = page.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"{PAGE} has no {BEGIN} ... {END} markers.")
    return f"{head}{BEGIN}\n{markdown(schema)}{END}{tail}"


def _live_schema() -> Schema:
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.db import connection

    with connection.cursor() as cursor:
        return read_schema(cursor)


def main(argv: list[str]) -> int:
    if argv == ["--markdown"]:
        sys.stdout.write(markdown(_live_schema()))
        return 0
    if argv == ["--write"]:
        PAGE.write_text(page_with_markdown(PAGE.read_text(), _live_schema()))
        return 0
    sys.stderr.write("usage: python -m harness.ops.distribution --markdown | --write\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

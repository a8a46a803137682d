"""Bulk data for the growth and memory scenarios: copy one row made by the services many times in SQL.

A template row is written through the services (so it is valid by construction); `clone` copies it
with `INSERT ... SELECT` over `generate_series` (or an array of ids), overriding the columns that must
differ. A million rows take seconds instead of the hours a million service calls would.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection


def columns(table: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
            [table],
        )
        return [row[0] for row in cursor.fetchall()]


def clone(table: str, template_id: int, *, count: int | None = None, over: Sequence[int] | None = None,
          source: str | None = None, overrides: dict[str, str] | None = None, params: dict | None = None) -> list[int]:
    """Copy row `template_id` of `table` once per g, returning the new ids in g order.

    g runs over 1..count, or over the values of `over` (e.g. the ids of rows cloned before), or comes
    from `source` (a FROM item naming its rows `s`). `overrides` maps a column (the id too) to an SQL
    expression over `t` (the template row), `g` or `s`.
    """
    overrides = overrides or {}
    cols = [c for c in columns(table) if c != "id" or "id" in overrides]
    select = ", ".join(overrides.get(c, f"t.{c}") for c in cols)
    if source is None:
        source = ("generate_series(1, %(count)s) AS g" if over is None
                  else "unnest(%(over)s::bigint[]) WITH ORDINALITY AS s(g, ord)")
    # The bench's own table names and SQL fragments (never input); every value is a bound parameter.
    sql = (f"INSERT INTO {table} ({', '.join(cols)}) SELECT {select} FROM {table} t, {source} "  # noqa: S608
           f"WHERE t.id = %(template)s RETURNING id")
    with connection.cursor() as cursor:
        cursor.execute(sql, {"template": template_id, "count": count, "over": list(over or []), **(params or {})})
        return sorted(row[0] for row in cursor.fetchall())


def execute(sql: str, params: dict | Sequence | None = None) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def analyze(*tables: str) -> None:
    for table in tables:
        execute(f"ANALYZE {table}")

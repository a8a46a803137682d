"""A finished run whose items are still in its session's conversation stays (retention, issue 20).

0020's `runs` branch deleted the session items a doomed run wrote. That let the runs policy cut items out of
the middle of a conversation that the items policy (or no policy: keep everything) still keeps, leaving holes in
the session's seq. The conversation's history is the items policy's to decide, so:

1. `harness_retention_runs` gains a last keep rule, `items_in_conversation`: the run wrote an item its session
   still holds (an index probe per run on the items' run_id). Once the items policy has pruned them (items go
   first in a pass), the run may go in the same pass.
2. The prune function's `runs` branch no longer deletes items. Should an item naming a doomed run appear
   between the rule's read and the DELETE, the run's foreign key refuses the round, which rolls back whole; the
   next round re-reads the rules.
Both functions are 0020's and 0021's generated text with these two changes spliced in (asserted anchors).
"""

import importlib

from django.db import migrations

_0020 = importlib.import_module("runs_app.migrations.0020_retention_runs")
_0021 = importlib.import_module("runs_app.migrations.0021_retention_runs_pointers_first")

RULE = "items_in_conversation"
RULE_SQL = """
        SELECT r.id FROM runs_app_run r
         WHERE r.project_id = p_project
           AND EXISTS (SELECT 1 FROM sessions_app_sessionitem i WHERE i.run_id = r.id)"""
ITEMS_DELETE = "        DELETE FROM sessions_app_sessionitem WHERE run_id = ANY(doomed);\n"


def _runs_function() -> str:
    old = _0020._runs_function()
    n = len(_0020.RUN_RULES)
    last_case = f"         WHEN k{n - 1}.id IS NOT NULL THEN '{_0020.RUN_RULES[-1][0]}'\n"
    join = f"  LEFT JOIN (SELECT DISTINCT k.id FROM ({RULE_SQL}) k) k{n} ON k{n}.id = x.id\n"
    tail = " WHERE x.expired\n"
    assert old.count(last_case) == 1 and old.count(tail) == 1
    return (old.replace(last_case, f"{last_case}         WHEN k{n}.id IS NOT NULL THEN '{RULE}'\n")
               .replace(tail, join + tail))


def _prune_function() -> str:
    old = _0021._prune_function()
    assert old.count(ITEMS_DELETE) == 1
    return old.replace(ITEMS_DELETE, "")


def _install(schema_editor, *sqls: str) -> None:
    with schema_editor.connection.cursor() as cursor:  # raw: the bodies' '%' are not placeholders
        cursor.execute("SELECT quote_ident(current_schema())")
        (schema,) = cursor.fetchone()
        for sql in sqls:
            cursor.execute(sql.replace("{schema}", schema))


def forwards(apps, schema_editor):
    _install(schema_editor, _runs_function(), _prune_function())


def backwards(apps, schema_editor):
    _install(schema_editor, _0020._runs_function(), _0021._prune_function())


class Migration(migrations.Migration):
    dependencies = [("runs_app", "0022_last_checkpoint_of_its_run")]
    operations = [migrations.RunPython(forwards, backwards)]

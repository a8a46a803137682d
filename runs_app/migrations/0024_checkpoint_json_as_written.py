"""A checkpoint's cursor, state, artifact fingerprints and pending gate are stored as `json`, not `jsonb`
(harness.fields.TextJSONField; issue 14, bench scenario H4).

Why: the lineage read (runs_app.selectors.checkpoint_lineage_json) sends up to 1,000 checkpoints as one JSON text
that PostgreSQL writes. A jsonb value is written out again from its binary form (jsonb_out escapes each string a
character at a time); a json value is its text, copied. Measured on a 1,000-deep chain of ~1 KB states (bench H4's
fixture), the statement alone, 60 runs each, interleaved, jit off, PostgreSQL 15 on this 2-core host: server
execution 14.1 -> 10.2 ms (-28%), client wall 18.5 -> 15.4 ms (-17%). Nothing searches these columns by their
content, compares them, or indexes them; every hash is over harness.canonical's text (harness/fields.py says what
json gives up and what it keeps). `metadata` (a LangGraph checkpoint's, filtered with `@>`) stays jsonb.

The rows already stored keep their values: `USING col::json` writes each as jsonb's text (keys in jsonb's order, as
the API has always returned them); new rows keep the JSON as written, keys in the agent's order.

Cost: ALTER COLUMN ... TYPE rewrites the table and rebuilds its indexes, under an ACCESS EXCLUSIVE lock (no read or
write of checkpoints until the migration commits). The four columns change in one ALTER TABLE, so the table is
rewritten once (Django's four AlterFields would rewrite it four times): 100,000 checkpoints of ~1 KB (147 MB with
indexes) took 1.6-1.7 s here as one statement, 5.3 s as four. Plan about 17 s per million checkpoints plus the disk
for a second copy of the table while it runs; on a large table run it in a maintenance window. Processes still
running the previous code keep working against the new columns: their `::jsonb` parameters are assigned through
PostgreSQL's jsonb -> json assignment cast (stored as jsonb's text), and their reads decode either text. But a
statement prepared before the migration that returns these columns (checkpoint_latest, the resume's load) fails with
"cached plan must not change result type" on that connection, every time, until the connection is replaced (after
DATABASE_CONN_MAX_AGE, 60 s by default): start the processes after migrating, as bin/serve does, or restart them.
Reversible: back to jsonb, `USING col::jsonb` (again one rewrite).
"""

from django.db import migrations

import harness.fields

_COLUMNS = ("cursor", "state", "artifact_fingerprints", "pending_gate")


def _alter(to: str) -> str:
    return "ALTER TABLE runs_app_checkpoint " + ", ".join(
        f"ALTER COLUMN {column} TYPE {to} USING {column}::{to}" for column in _COLUMNS)


class Migration(migrations.Migration):
    dependencies = [("runs_app", "0023_retention_runs_keep_conversation")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(_alter("json"), reverse_sql=_alter("jsonb"))],
            state_operations=[
                migrations.AlterField(model_name="checkpoint", name="cursor",
                                      field=harness.fields.TextJSONField(blank=True, default=dict)),
                migrations.AlterField(model_name="checkpoint", name="state",
                                      field=harness.fields.TextJSONField(blank=True, default=dict)),
                migrations.AlterField(model_name="checkpoint", name="artifact_fingerprints",
                                      field=harness.fields.TextJSONField(blank=True, default=dict)),
                migrations.AlterField(model_name="checkpoint", name="pending_gate",
                                      field=harness.fields.TextJSONField(blank=True, null=True)),
            ],
        ),
    ]

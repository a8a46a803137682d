"""Let PostgreSQL refuse rewrites of append-only history, whatever code path tries.

Session items, run events and checkpoints may not be updated (items may still be trimmed by
DELETE); audit entries may be neither updated nor deleted.
"""

from django.db import migrations

TABLES = {
    "sessions_app_sessionitem": "UPDATE",
    "runs_app_runevent": "UPDATE",
    "runs_app_checkpoint": "UPDATE",
    "harness_auditentry": "UPDATE OR DELETE",
}

FUNCTION = """
CREATE OR REPLACE FUNCTION harness_refuse_rewrite() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'append-only table %: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
"""


def forwards(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:  # raw: the body's '%' is not a placeholder
        cursor.execute(FUNCTION)
    for table, ops in TABLES.items():
        schema_editor.execute(
            f"CREATE TRIGGER {table}_append_only BEFORE {ops} ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION harness_refuse_rewrite();"
        )


def backwards(apps, schema_editor):
    for table in TABLES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table};")
    schema_editor.execute("DROP FUNCTION IF EXISTS harness_refuse_rewrite();")


class Migration(migrations.Migration):
    dependencies = [
        ("runs_app", "0002_initial"),
        ("sessions_app", "0001_initial"),
        ("harness", "0001_initial"),
    ]
    operations = [migrations.RunPython(forwards, backwards)]

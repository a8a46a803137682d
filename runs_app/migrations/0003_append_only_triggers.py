"""Let PostgreSQL refuse rewrites of append-only history, whatever code path tries.

Session items, run events and checkpoints may not be updated (items may still be trimmed by
DELETE); audit entries may be neither updated nor deleted.
"""

from django.db import migrations

from harness.sql_files import install, load

# Each trigger refuses the rewrite (sessions_app 0004 later opens one door on session items).
TRIGGERS = {
    "runs_app": ("runs_app_runevent_append_only", "runs_app_checkpoint_append_only", "harness_auditentry_append_only"),
    "sessions_app": ("sessions_app_sessionitem_append_only",),
}


class Migration(migrations.Migration):
    dependencies = [
        ("runs_app", "0002_initial"),
        ("sessions_app", "0001_initial"),
        ("harness", "0001_initial"),
    ]
    operations = [
        install(
            load("runs_app", "harness_refuse_rewrite.v1.sql"),
            *(load(app, f"{name}.trigger.v1.sql") for app, names in TRIGGERS.items() for name in names),
            reverse=[
                "DROP TRIGGER IF EXISTS sessions_app_sessionitem_append_only ON sessions_app_sessionitem;",
                "DROP TRIGGER IF EXISTS runs_app_runevent_append_only ON runs_app_runevent;",
                "DROP TRIGGER IF EXISTS runs_app_checkpoint_append_only ON runs_app_checkpoint;",
                "DROP TRIGGER IF EXISTS harness_auditentry_append_only ON harness_auditentry;",
                "DROP FUNCTION IF EXISTS harness_refuse_rewrite();",
            ],
        ),
    ]

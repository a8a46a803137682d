"""The prune function's `runs` branch no longer leans on deferred foreign keys (runs_app migration 0020).

0020 deleted a run's checkpoints and approvals while the run row still pointed at them (`last_checkpoint`,
`pending_approval`), which holds only while the constraints are deferred. A caller in an outer transaction whose
earlier round ran `SET CONSTRAINTS ALL IMMEDIATE` (runs_app.retention does, before each round's audit entry)
made the next round's DELETE fail. The branch now clears the doomed runs' own pointers first, so each statement
leaves no dangling reference, deferred or not: harness_retention_prune v3 is v2 with that one UPDATE added.
"""

from django.db import migrations

from harness.sql_files import install, load


class Migration(migrations.Migration):
    dependencies = [("runs_app", "0020_retention_runs")]
    operations = [
        install(load("runs_app", "harness_retention_prune.v3.sql"),
                reverse=[load("runs_app", "harness_retention_prune.v2.sql")]),
    ]

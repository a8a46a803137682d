"""LangGraph threads' TTL, and the retention keep rules a thread's prune, deletion and TTL share (issue 34).

1. `RetentionPolicy.thread_ttl_days` (the project's default) and `Run.thread_ttl_days` (a thread's own): the
   retention pass deletes the checkpoints and writes of a thread unchanged for longer (runs_app.services.
   thread_lifecycle).
2. `harness_retention_needed_runs(project)`: the runs that a pending approval (`shown_by_pending_approval`) or an
   unconsumed effect (`effect_not_consumed`) needs, the two keep rules that `harness_retention_runs` wrote inline.
   v3 of that function reads them from here, and so do the threads' prune, deletion and TTL: one rule.
"""

from django.db import migrations, models

from harness.sql_files import install, load


class Migration(migrations.Migration):
    dependencies = [("runs_app", "0032_standing_outcome")]
    operations = [
        migrations.AddField(model_name="retentionpolicy", name="thread_ttl_days", field=models.PositiveIntegerField(
            blank=True, help_text="LangGraph threads, days since their last change.", null=True)),
        migrations.AddField(model_name="run", name="thread_ttl_days",
                            field=models.PositiveIntegerField(blank=True, null=True)),
        install(load("runs_app", "harness_retention_needed_runs.v1.sql"),
                load("runs_app", "harness_retention_runs.v3.sql"),
                reverse=[load("runs_app", "harness_retention_runs.v2.sql"),
                         "DROP FUNCTION harness_retention_needed_runs(bigint)"]),
    ]

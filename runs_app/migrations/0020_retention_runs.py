"""Retention of finished runs themselves (issue 20, part 1): a run that goes takes its whole history with it.

1. `runs_app_retentionpolicy` gains `runs_max_age_days` (age since the run's last change: for a finished run,
   when it finished) and `runs_keep_last` (the newest runs of the project stay; live ones count and stay).
2. `harness_retention_runs(project)` (runs_app/sql/harness_retention_runs.v1.sql): like the other kinds'
   functions (migration 0019), the runs the policy lets go, each with `kept_by`, the first keep rule that holds.
3. `harness_retention_prune` is replaced (v2), with a `runs` branch that
   deletes, in one call, the runs no rule keeps and every row that points at them: events, node executions,
   LangGraph writes, context snapshots, the session items they wrote, handoffs they issued, their effects
   (and those bound to their approvals), checkpoints, approvals; a memory record's `source_run` becomes NULL
   (Django's SET_NULL, which PostgreSQL does not do by itself; a live record's run is kept instead). The
   foreign keys are deferred, so the run's own pointers (last checkpoint, pending approval) need no ordering.
4. A trigger refuses DELETE on runs_app_run except through the owner's history door (migration 0013), as for
   run events: the runtime role deletes runs only through the prune function.

Keep rules for a run (a rule on a row that is not the run's own names what still needs it):
- run_live: the run is not succeeded, failed or cancelled (waiting, blocked, resumable).
- task_current_run: it is the newest run of a task that is not finished (open, active, waiting).
- shown_by_pending_approval: its session has a pending approval, whose page shows that session's items.
- effect_not_consumed: an effect of it (or of one of its approvals) is neither consumed, refused nor abandoned.
- handoff_open: a handoff it issued or received is still open (issued, accepted, returned).
- memory_provenance: an active or held memory record names it, or an item it wrote, as its source.
- task_latest_checkpoint: a task's latest checkpoint is one of its checkpoints.
- continued_by_live_run: a live run's checkpoint has its parent here (a live fork of it, or the task's next run).
- lineage_of_kept: any other checkpoint (another run's, or a task's own) has its parent here: the line a resume
  verifies, and the parent foreign key. So a run continued by another goes only after that one has gone (the
  pass's next round re-reads the rules).
- cited_by_other_history: another run's last checkpoint or node execution points at one of its checkpoints,
  another run's pending approval, checkpoint or effect at one of its approvals, or it is the receiver of another
  run's handoff (which goes with its origin run).
"""

from django.db import migrations, models

from harness.sql_files import install, load


class Migration(migrations.Migration):
    dependencies = [
        ("runs_app", "0019_retention"),
        ("memory_app", "0004_contextsnapshot_manifest"),
    ]
    operations = [
        migrations.AddField(
            model_name="retentionpolicy", name="runs_max_age_days",
            field=models.PositiveIntegerField(blank=True, null=True,
                                              help_text="Finished runs, by the time of their last change."),
        ),
        migrations.AddField(
            model_name="retentionpolicy", name="runs_keep_last",
            field=models.PositiveIntegerField(blank=True, null=True, help_text="Per project (live runs count too)."),
        ),
        # The function reads the new columns: they come first.
        install(
            load("runs_app", "harness_retention_runs.v1.sql"),
            load("runs_app", "harness_retention_prune.v2.sql"),
            load("runs_app", "runs_app_run_no_delete.trigger.v1.sql"),
            reverse=["DROP TRIGGER IF EXISTS runs_app_run_no_delete ON runs_app_run",
                     load("runs_app", "harness_retention_prune.v1.sql"),
                     "DROP FUNCTION IF EXISTS harness_retention_runs(bigint)"],
        ),
    ]

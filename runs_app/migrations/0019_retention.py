"""Retention (issue 20, part 1): each project's policy, and the keep rules as SQL, written once.

1. `runs_app_retentionpolicy`: per project, by kind, a maximum age in days and a count to keep.
2. One function per kind, `harness_retention_<kind>(project)`: the rows the policy lets go (older than the
   age, or beyond the newest `keep_last` of their scope), each with `kept_by`, the first keep rule that holds
   (NULL: nothing keeps it). Each large rule is a LEFT JOIN to the project's set (live runs, runs' last
   checkpoints, the kept lineage...), a hash join once per statement, rather than a correlated EXISTS:
   runs' `last_checkpoint` has no index (it keeps pointer updates HOT), and a lookup per row made a pass
   quadratic. The small sets (pending approvals' sessions) stay `IN` subqueries. The dry run counts these rows; the pass deletes the ones whose `kept_by` is NULL.
   Both read the same function, so they cannot disagree.
3. `harness_retention_prune(project, kind, limit)`: deletes at most `limit` rows of one kind that nothing
   keeps, in one statement. SECURITY DEFINER and owned by the tables' owner (the role migrating), with
   `harness.history_delete` set for the call only: the one door through the triggers of migration 0013 for
   run events and checkpoints. The runtime role may call it, and it can do no more than the policy and the
   keep rules allow; it cannot delete an event or a checkpoint any other way.

Keep rules (a run is live unless it succeeded, failed or was cancelled: a waiting, blocked or resumable run is
live):
- run_live: the row belongs to a live run (an item written by one, a checkpoint of one or of its task).
- shown_by_pending_approval: an item the approval page shows (the session's newest APPROVAL_PAGE_ITEMS, as
  sessions_app.trimming) or the pending run's context snapshots list; a pending approval's checkpoint.
- memory_provenance: an item that an active (or held) memory record names as its source.
- effect_not_consumed: an effect that is neither consumed nor finished otherwise (refused, abandoned).
- task_latest_checkpoint, run_last_checkpoint, node_execution: a checkpoint that a task, a run or a node
  execution points at; lineage_of_kept: an ancestor of any checkpoint that stays (what a resume verifies, and
  what the parent foreign key needs). So a checkpoint goes only with all its descendants, deepest first.
"""

import django.db.models.deletion
from django.db import migrations, models

from harness.sql_files import install, load

# The prune function reads the kinds' functions: they come first.
FUNCTIONS = ("harness_retention_items", "harness_retention_events", "harness_retention_snapshots",
             "harness_retention_effects", "harness_retention_checkpoints", "harness_retention_prune")
DROP = [
    "DROP FUNCTION IF EXISTS harness_retention_prune(bigint, text, integer);",
    "DROP FUNCTION IF EXISTS harness_retention_items(bigint);",
    "DROP FUNCTION IF EXISTS harness_retention_events(bigint);",
    "DROP FUNCTION IF EXISTS harness_retention_snapshots(bigint);",
    "DROP FUNCTION IF EXISTS harness_retention_effects(bigint);",
    "DROP FUNCTION IF EXISTS harness_retention_checkpoints(bigint);",
]


class Migration(migrations.Migration):
    dependencies = [
        ("runs_app", "0018_handoff_receiver_token"),
        ("harness", "0003_token_expiry_worker_heartbeat"),
        ("sessions_app", "0003_session_context_budget"),
        ("memory_app", "0004_contextsnapshot_manifest"),
    ]
    operations = [
        migrations.CreateModel(
            name="RetentionPolicy",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("items_max_age_days", models.PositiveIntegerField(blank=True, null=True)),
                ("items_keep_last", models.PositiveIntegerField(blank=True, help_text="Per session.", null=True)),
                ("events_max_age_days", models.PositiveIntegerField(blank=True, null=True)),
                ("events_keep_last", models.PositiveIntegerField(blank=True, help_text="Per run.", null=True)),
                ("checkpoints_max_age_days", models.PositiveIntegerField(blank=True, null=True)),
                ("checkpoints_keep_last", models.PositiveIntegerField(blank=True, help_text="Per run (or task).",
                                                                      null=True)),
                ("effects_max_age_days", models.PositiveIntegerField(blank=True, null=True)),
                ("effects_keep_last", models.PositiveIntegerField(blank=True, help_text="Per project.", null=True)),
                ("snapshots_max_age_days", models.PositiveIntegerField(blank=True, null=True)),
                ("snapshots_keep_last", models.PositiveIntegerField(blank=True, help_text="Per run.", null=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("project", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE,
                                                 related_name="retention_policy", to="harness.project")),
            ],
        ),
        install(*(load("runs_app", f"{name}.v1.sql") for name in FUNCTIONS), reverse=DROP),
    ]

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
harness_retention_runs v2 and harness_retention_prune v4 (runs_app/sql/) are v1 and v3 with these two changes.
"""

from django.db import migrations

from harness.sql_files import install, load


class Migration(migrations.Migration):
    dependencies = [("runs_app", "0022_last_checkpoint_of_its_run")]
    operations = [
        install(load("runs_app", "harness_retention_runs.v2.sql"), load("runs_app", "harness_retention_prune.v4.sql"),
                reverse=[load("runs_app", "harness_retention_runs.v1.sql"),
                         load("runs_app", "harness_retention_prune.v3.sql")]),
    ]

"""A pruned run takes its approvals' quorum votes, its standing approvals and its questions with it (issue 33).

Migration 0029 added rows that point at runs and approvals (ApprovalVote, StandingApproval.run, HumanQuestion.run).
PostgreSQL's foreign keys do not cascade as Django's on_delete says, so the retention pass's `runs` branch would
have failed on a run that had any of them: harness_retention_prune v5 (runs_app/sql/) is v4 with their DELETEs,
each before the row it points at goes.
"""

from django.db import migrations

from harness.sql_files import install, load


class Migration(migrations.Migration):
    dependencies = [("runs_app", "0029_policies_groups_votes_rules_questions")]
    operations = [
        install(load("runs_app", "harness_retention_prune.v5.sql"),
                reverse=[load("runs_app", "harness_retention_prune.v4.sql")]),
    ]

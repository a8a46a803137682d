"""The approval.decided webhook carries a rejection's reject option (issue 33, part 3): `reject_option`, the name the
reviewer chose ("" for none), and `agent_text`, the policy version's text for the agent, so a receiver can change
course. notify_app_approval_decided v3 is v2 with those two keys."""

from django.db import migrations

from harness.sql_files import install, load


class Migration(migrations.Migration):

    dependencies = [
        ("notify_app", "0003_outcomes_decided_changes"),
        ("runs_app", "0031_approval_decided_index"),
    ]

    operations = [
        install(load("notify_app", "notify_app_approval_decided.v3.sql"),
                reverse=[load("notify_app", "notify_app_approval_decided.v2.sql")]),
    ]

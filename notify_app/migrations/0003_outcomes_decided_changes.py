"""The approval.decided webhook says what the reviewer changed (issue 32, part 3): `edited` and `changes`, the
key-by-key diff the decision records in ApprovalRequest.arguments_changes (runs_app 0027), the same list the
audit entry carries. notify_app_approval_decided v2 is v1 with those two keys."""

from django.db import migrations

from harness.sql_files import install, load


class Migration(migrations.Migration):

    dependencies = [
        ("notify_app", "0002_event_triggers"),
        ("runs_app", "0027_outcomes_approval_outcome"),
    ]

    operations = [
        install(load("notify_app", "notify_app_approval_decided.v2.sql"),
                reverse=[load("notify_app", "notify_app_approval_decided.v1.sql")]),
    ]

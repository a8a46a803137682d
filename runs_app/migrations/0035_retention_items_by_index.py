"""The retention pass's items in time with what it removes, not with what it keeps (issue 35, section 5).

harness_retention_items v2 finds the items past the policy through the session's (session, seq) and
(session, created_at) indexes instead of numbering every item of the project in a window: the same rows, the same
keep rules, in the same order. Each of a pass's DELETE statements re-reads the rules, so with v1 a pass that
removed 10,000 items of a project holding a million read and sorted the million several times.
"""

from django.db import migrations

from harness.sql_files import install, load


class Migration(migrations.Migration):
    dependencies = [("runs_app", "0034_push_notify"),
                    ("sessions_app", "0007_item_session_index_in_seq_unique")]
    operations = [
        install(load("runs_app", "harness_retention_items.v2.sql"),
                reverse=[load("runs_app", "harness_retention_items.v1.sql")]),
    ]

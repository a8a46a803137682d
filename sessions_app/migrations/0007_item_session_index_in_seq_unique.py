"""SessionItem.session loses its own index (issue 35, section 5): session_item_seq_unique (session, seq) leads with
the same column, so every lookup by session still has an index; the duplicate cost a write per append and, being
smaller, drew the planner to walk all of a session's items for a range of its seqs (runs_app migration 0035)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0006_session_end_user")]

    operations = [
        migrations.AlterField(
            model_name="sessionitem",
            name="session",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="items",
                                    to="sessions_app.session"),
        ),
    ]

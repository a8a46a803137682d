"""Task.effect_records goes (issue 30): a task's effect records and pending approvals are derived from the real
ExternalEffect and ApprovalRequest rows of its runs (runs_app.selectors.task_durable_state), not free JSON a
client wrote. The state history's trigger function (0012) records the remaining client-written fields
(runs_app.services.tasks.TASK_CLIENT_FIELDS): runs_app_task_record_state v2."""

from django.db import migrations

from harness.sql_files import install, load


class Migration(migrations.Migration):
    dependencies = [("runs_app", "0025_remove_run_turn_index")]

    operations = [
        install(load("runs_app", "runs_app_task_record_state.v2.sql"),
                reverse=[load("runs_app", "runs_app_task_record_state.v1.sql")]),
        migrations.RemoveField(model_name="task", name="effect_records"),
    ]

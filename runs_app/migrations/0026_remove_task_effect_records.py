"""Task.effect_records goes (issue 30): a task's effect records and pending approvals are derived from the real
ExternalEffect and ApprovalRequest rows of its runs (runs_app.selectors.task_durable_state), not free JSON a
client wrote. The state history's trigger (0012) records the remaining client-written fields."""

from django.db import migrations


def _function(fields: tuple[str, ...]) -> str:
    state = "jsonb_build_object(" + ", ".join(f"'{f}', NEW.{f}" for f in fields) + ")"
    changed = "({new}) IS DISTINCT FROM ({old})".format(
        new=", ".join(f"NEW.{f}" for f in fields), old=", ".join(f"OLD.{f}" for f in fields))
    return f"""
CREATE OR REPLACE FUNCTION runs_app_task_record_state() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' OR {changed} THEN
        INSERT INTO runs_app_taskstateversion (project_id, task_id, version, state, recorded_at)
        VALUES (NEW.project_id, NEW.id, NEW.version, {state}, statement_timestamp());
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""


# runs_app.services.tasks.TASK_CLIENT_FIELDS, as 0012's STATE_FIELDS were then.
STATE_FIELDS = ("objective", "constraints", "plan", "plan_version", "completed_nodes", "pending_nodes",
                "artifact_refs", "schema_version")
BEFORE = ("objective", "constraints", "plan", "plan_version", "completed_nodes", "pending_nodes",
          "artifact_refs", "effect_records", "schema_version")


class Migration(migrations.Migration):
    dependencies = [("runs_app", "0025_remove_run_turn_index")]

    operations = [
        migrations.RunSQL(_function(STATE_FIELDS), _function(BEFORE)),
        migrations.RemoveField(model_name="task", name="effect_records"),
    ]

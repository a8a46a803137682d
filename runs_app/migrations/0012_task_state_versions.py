"""A task's state history: each save of its durable state leaves a row, whichever door saved it.

A trigger rather than a write in runs_app.services.tasks: the API, the worker's node completions, the
demo and the admin all change tasks, and the row is written in the same statement's transaction at no
extra round trip (the resume's statement count stays as tests/worker/test_resume_cost.py pins it).
"""

import django.db.models.deletion
from django.db import migrations, models


# The fields runs_app.services.tasks.TASK_CLIENT_FIELDS lets a client write: the task's durable state.
STATE_FIELDS = ("objective", "constraints", "plan", "plan_version", "completed_nodes", "pending_nodes",
                "artifact_refs", "effect_records", "schema_version")
_STATE = "jsonb_build_object(" + ", ".join(f"'{f}', {{row}}.{f}" for f in STATE_FIELDS) + ")"
_CHANGED = "({new}) IS DISTINCT FROM ({old})".format(
    new=", ".join(f"NEW.{f}" for f in STATE_FIELDS), old=", ".join(f"OLD.{f}" for f in STATE_FIELDS))

CREATE = f"""
CREATE FUNCTION runs_app_task_record_state() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' OR {_CHANGED} THEN
        INSERT INTO runs_app_taskstateversion (project_id, task_id, version, state, recorded_at)
        VALUES (NEW.project_id, NEW.id, NEW.version, {_STATE.format(row="NEW")}, statement_timestamp());
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER runs_app_task_state_history AFTER INSERT OR UPDATE ON runs_app_task
    FOR EACH ROW EXECUTE FUNCTION runs_app_task_record_state();
CREATE TRIGGER runs_app_taskstateversion_append_only BEFORE UPDATE ON runs_app_taskstateversion
    FOR EACH ROW EXECUTE FUNCTION harness_refuse_rewrite();
INSERT INTO runs_app_taskstateversion (project_id, task_id, version, state, recorded_at)
SELECT t.project_id, t.id, t.version, {_STATE.format(row="t")}, t.updated_at FROM runs_app_task t;
"""
DROP = """
DROP TRIGGER IF EXISTS runs_app_taskstateversion_append_only ON runs_app_taskstateversion;
DROP TRIGGER IF EXISTS runs_app_task_state_history ON runs_app_task;
DROP FUNCTION IF EXISTS runs_app_task_record_state();
"""


class Migration(migrations.Migration):

    dependencies = [
        ('harness', '0001_initial'),
        ('runs_app', '0011_run_list_indexes'),
    ]

    operations = [
        migrations.CreateModel(
            name='TaskStateVersion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('version', models.PositiveIntegerField()),
                ('state', models.JSONField(help_text="The task's client-written fields at this version.")),
                ('recorded_at', models.DateTimeField()),
                ('project', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='harness.project')),
                ('task', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='state_versions', to='runs_app.task')),
            ],
            options={
                'ordering': ['task', '-id'],
                'indexes': [models.Index(fields=['task', '-id'], name='task_state_version_task')],
            },
        ),
        migrations.RunSQL(CREATE, DROP),
    ]

"""A task's state history: each save of its durable state leaves a row, whichever door saved it.

A trigger rather than a write in runs_app.services.tasks: the API, the worker's node completions, the
demo and the admin all change tasks, and the row is written in the same statement's transaction at no
extra round trip (the resume's statement count stays as tests/worker/test_resume_cost.py pins it).
"""

import django.db.models.deletion
from django.db import migrations, models

from harness.sql_files import install, load

# The tasks written before this migration get their first version (the trigger records the later saves).
BACKFILL = """
INSERT INTO runs_app_taskstateversion (project_id, task_id, version, state, recorded_at)
SELECT t.project_id, t.id, t.version,
       jsonb_build_object('objective', t.objective, 'constraints', t.constraints, 'plan', t.plan,
                          'plan_version', t.plan_version, 'completed_nodes', t.completed_nodes,
                          'pending_nodes', t.pending_nodes, 'artifact_refs', t.artifact_refs,
                          'effect_records', t.effect_records, 'schema_version', t.schema_version),
       t.updated_at
  FROM runs_app_task t;
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
        install(
            load("runs_app", "runs_app_task_record_state.v1.sql"),
            load("runs_app", "runs_app_task_state_history.trigger.v1.sql"),
            load("runs_app", "runs_app_taskstateversion_append_only.trigger.v1.sql"),
            BACKFILL,
            reverse=["DROP TRIGGER IF EXISTS runs_app_taskstateversion_append_only ON runs_app_taskstateversion;",
                     "DROP TRIGGER IF EXISTS runs_app_task_state_history ON runs_app_task;",
                     "DROP FUNCTION IF EXISTS runs_app_task_record_state();"],
        ),
    ]

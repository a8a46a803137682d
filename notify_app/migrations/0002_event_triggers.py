"""Decisions and run state changes owe their webhook deliveries from triggers, not from the services.

A trigger, as for a task's state history (runs_app 0012): every door (API, console, bulk form, admin, worker,
expiry) changes approvals and runs, and the delivery rows are written in the changing statement's transaction
at no extra round trip, so the resume's and the decision's statement counts stay as
tests/worker/test_resume_cost.py pins them. A project without a subscribed webhook pays one index probe of
notify_app_webhook per change. The beat task notify.send_due hands the new rows to the Celery delivery task.
"""

from django.db import migrations

from harness.sql_files import install, load


class Migration(migrations.Migration):

    dependencies = [
        ("notify_app", "0001_initial"),
        ("runs_app", "0012_task_state_versions"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        install(
            load("notify_app", "notify_app_run_status_changed.v1.sql"),
            load("notify_app", "notify_app_run_status.trigger.v1.sql"),
            load("notify_app", "notify_app_approval_decided.v1.sql"),
            load("notify_app", "notify_app_approval_decided.trigger.v1.sql"),
            reverse=[
                "DROP TRIGGER IF EXISTS notify_app_approval_decided ON runs_app_approvalrequest;",
                "DROP FUNCTION IF EXISTS notify_app_approval_decided();",
                "DROP TRIGGER IF EXISTS notify_app_run_status ON runs_app_run;",
                "DROP FUNCTION IF EXISTS notify_app_run_status_changed();",
            ],
        ),
    ]

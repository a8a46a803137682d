"""The push (issue 35): a NOTIFY on `harness_push` when an approval is created or changes status and when a run's
status changes, from triggers so that every path that writes them (the API, the console, the worker, bulk
decisions, expiry) sends it, inside its own transaction: delivered on commit only. harness.push listens."""

from django.db import migrations

from harness.sql_files import install, load


class Migration(migrations.Migration):
    dependencies = [("runs_app", "0033_thread_ttl_retention_needed_runs")]
    operations = [
        install(load("runs_app", "harness_push_notify.v1.sql"),
                load("runs_app", "runs_app_approvalrequest_push.trigger.v1.sql"),
                load("runs_app", "runs_app_run_push.trigger.v1.sql"),
                reverse=["DROP TRIGGER runs_app_run_push ON runs_app_run",
                         "DROP TRIGGER runs_app_approvalrequest_push ON runs_app_approvalrequest",
                         "DROP FUNCTION harness_push_notify()"]),
    ]

"""Decisions and run state changes owe their webhook deliveries from triggers, not from the services.

A trigger, as for a task's state history (runs_app 0012): every door (API, console, bulk form, admin, worker,
expiry) changes approvals and runs, and the delivery rows are written in the changing statement's transaction
at no extra round trip, so the resume's and the decision's statement counts stay as
tests/worker/test_resume_cost.py pins them. A project without a subscribed webhook pays one index probe of
notify_app_webhook per change. The beat task notify.send_due hands the new rows to the Celery delivery task.
"""

from django.db import migrations

_DELIVERY = """
        INSERT INTO notify_app_webhookdelivery (project_id, webhook_id, kind, url, event, payload, status, attempts,
                                                next_attempt_at, delivered_at, created_at)
        SELECT w.project_id, w.id, 'signed', w.url, '{event}',
               jsonb_build_object('event', '{event}', 'occurred_at', to_jsonb(statement_timestamp()), 'data', {data}),
               'pending', 0, NULL, NULL, statement_timestamp()
          FROM notify_app_webhook w
         WHERE w.project_id = NEW.project_id AND w.active AND w.events @> ARRAY['{event}']::varchar[];
"""

_RUN_DATA = ("jsonb_build_object('project_id', NEW.project_id, 'run_id', NEW.id, 'ref', NEW.ref, "
             "'status', NEW.status, 'version', NEW.version, 'blocked_step', NEW.blocked_step)")
_APPROVAL_DATA = ("jsonb_build_object('project_id', NEW.project_id, 'approval_id', NEW.id, 'run_id', NEW.run_id, "
                  "'status', NEW.status, "
                  "'fingerprint', COALESCE(NULLIF(NEW.approved_fingerprint, ''), NEW.action_fingerprint), "
                  "'decided_by', COALESCE((SELECT u.username FROM auth_user u WHERE u.id = NEW.decided_by_id), ''), "
                  "'reason', NEW.decision_reason)")

CREATE = f"""
CREATE FUNCTION notify_app_run_status_changed() RETURNS trigger AS $$
BEGIN
{_DELIVERY.format(event="run.status_changed", data=_RUN_DATA)}
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER notify_app_run_status AFTER UPDATE OF status ON runs_app_run
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION notify_app_run_status_changed();

CREATE FUNCTION notify_app_approval_decided() RETURNS trigger AS $$
BEGIN
{_DELIVERY.format(event="approval.decided", data=_APPROVAL_DATA)}
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER notify_app_approval_decided AFTER UPDATE OF status ON runs_app_approvalrequest
    FOR EACH ROW WHEN (OLD.status = 'pending' AND NEW.status <> 'pending')
    EXECUTE FUNCTION notify_app_approval_decided();
"""
DROP = """
DROP TRIGGER IF EXISTS notify_app_approval_decided ON runs_app_approvalrequest;
DROP FUNCTION IF EXISTS notify_app_approval_decided();
DROP TRIGGER IF EXISTS notify_app_run_status ON runs_app_run;
DROP FUNCTION IF EXISTS notify_app_run_status_changed();
"""


class Migration(migrations.Migration):

    dependencies = [
        ("notify_app", "0001_initial"),
        ("runs_app", "0012_task_state_versions"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunSQL(CREATE, DROP)]

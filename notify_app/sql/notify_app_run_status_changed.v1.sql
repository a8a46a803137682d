CREATE OR REPLACE FUNCTION notify_app_run_status_changed() RETURNS trigger AS $$
BEGIN

        INSERT INTO notify_app_webhookdelivery (project_id, webhook_id, kind, url, event, payload, status, attempts,
                                                next_attempt_at, delivered_at, created_at)
        SELECT w.project_id, w.id, 'signed', w.url, 'run.status_changed',
               jsonb_build_object('event', 'run.status_changed', 'occurred_at', to_jsonb(statement_timestamp()), 'data', jsonb_build_object('project_id', NEW.project_id, 'run_id', NEW.id, 'ref', NEW.ref, 'status', NEW.status, 'version', NEW.version, 'blocked_step', NEW.blocked_step)),
               'pending', 0, NULL, NULL, statement_timestamp()
          FROM notify_app_webhook w
         WHERE w.project_id = NEW.project_id AND w.active AND w.events @> ARRAY['run.status_changed']::varchar[];

    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

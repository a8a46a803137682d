CREATE OR REPLACE FUNCTION notify_app_approval_decided() RETURNS trigger AS $$
BEGIN

        INSERT INTO notify_app_webhookdelivery (project_id, webhook_id, kind, url, event, payload, status, attempts,
                                                next_attempt_at, delivered_at, created_at)
        SELECT w.project_id, w.id, 'signed', w.url, 'approval.decided',
               jsonb_build_object('event', 'approval.decided', 'occurred_at', to_jsonb(statement_timestamp()), 'data', jsonb_build_object('project_id', NEW.project_id, 'approval_id', NEW.id, 'run_id', NEW.run_id, 'status', NEW.status, 'fingerprint', COALESCE(NULLIF(NEW.approved_fingerprint, ''), NEW.action_fingerprint), 'decided_by', COALESCE((SELECT u.username FROM auth_user u WHERE u.id = NEW.decided_by_id), ''), 'reason', NEW.decision_reason, 'edited', COALESCE(NULLIF(NEW.approved_fingerprint, ''), NEW.action_fingerprint) <> NEW.action_fingerprint, 'changes', COALESCE(NEW.arguments_changes, '[]'::jsonb), 'reject_option', NEW.reject_option, 'agent_text', COALESCE((SELECT o->>'agent_text' FROM runs_app_approvalpolicy p CROSS JOIN LATERAL jsonb_array_elements(p.reject_options) o WHERE p.id = NEW.policy_id AND NEW.reject_option <> '' AND o->>'name' = NEW.reject_option LIMIT 1), ''))),
               'pending', 0, NULL, NULL, statement_timestamp()
          FROM notify_app_webhook w
         WHERE w.project_id = NEW.project_id AND w.active AND w.events @> ARRAY['approval.decided']::varchar[];

    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION harness_imported_guard() RETURNS trigger AS $$
-- Refuses a write to a session, run or task imported from another instance (harness_importedrow), with SQLSTATE
-- HX409 (409 imported_read_only). One index probe per write; imported rows are written only by the import, which
-- marks them last. The one write an imported run takes: a fork's note on its source (event run.fork_made, and the
-- run's last_event_seq that numbers it).
DECLARE
    target_kind text;
    target_id bigint;
BEGIN
    IF TG_TABLE_NAME = 'runs_app_run' THEN
        IF TG_OP = 'INSERT' THEN
            target_kind := 'session'; target_id := NEW.session_id;
        ELSE
            target_kind := 'run'; target_id := OLD.id;
            IF (to_jsonb(NEW) - 'last_event_seq' - 'updated_at') = (to_jsonb(OLD) - 'last_event_seq' - 'updated_at')
               AND NEW.last_event_seq = OLD.last_event_seq + 1 THEN
                RETURN NEW;  -- a fork's note (the event's own insert is checked below)
            END IF;
        END IF;
    ELSIF TG_TABLE_NAME = 'sessions_app_session' THEN
        target_kind := 'session'; target_id := OLD.id;
    ELSIF TG_TABLE_NAME = 'runs_app_task' THEN
        target_kind := 'task'; target_id := OLD.id;
    ELSIF TG_TABLE_NAME = 'sessions_app_sessionitem' THEN
        target_kind := 'session'; target_id := NEW.session_id;
    ELSIF TG_TABLE_NAME = 'runs_app_checkpoint' THEN
        IF NEW.run_id IS NULL THEN
            target_kind := 'task'; target_id := NEW.task_id;
        ELSE
            target_kind := 'run'; target_id := NEW.run_id;
        END IF;
    ELSIF TG_TABLE_NAME = 'runs_app_runevent' THEN
        IF NEW.kind = 'run.fork_made' THEN
            RETURN NEW;
        END IF;
        target_kind := 'run'; target_id := NEW.run_id;
    ELSIF TG_TABLE_NAME = 'runs_app_handoff' THEN
        target_kind := 'run'; target_id := CASE WHEN TG_OP = 'INSERT' THEN NEW.origin_run_id ELSE OLD.origin_run_id END;
    ELSE
        -- a table whose rows hang off a run: approvals, effects, node executions, questions, context snapshots
        target_kind := 'run'; target_id := CASE WHEN TG_OP = 'INSERT' THEN NEW.run_id ELSE OLD.run_id END;
    END IF;
    IF target_id IS NOT NULL AND EXISTS (SELECT 1 FROM harness_importedrow r
                                          WHERE r.kind = target_kind AND r.local_id = target_id) THEN
        RAISE EXCEPTION 'imported % % is read-only: % on % refused', target_kind, target_id, TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'HX409';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION runs_app_task_record_state() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' OR (NEW.objective, NEW.constraints, NEW.plan, NEW.plan_version, NEW.completed_nodes, NEW.pending_nodes, NEW.artifact_refs, NEW.schema_version) IS DISTINCT FROM (OLD.objective, OLD.constraints, OLD.plan, OLD.plan_version, OLD.completed_nodes, OLD.pending_nodes, OLD.artifact_refs, OLD.schema_version) THEN
        INSERT INTO runs_app_taskstateversion (project_id, task_id, version, state, recorded_at)
        VALUES (NEW.project_id, NEW.id, NEW.version, jsonb_build_object('objective', NEW.objective, 'constraints', NEW.constraints, 'plan', NEW.plan, 'plan_version', NEW.plan_version, 'completed_nodes', NEW.completed_nodes, 'pending_nodes', NEW.pending_nodes, 'artifact_refs', NEW.artifact_refs, 'schema_version', NEW.schema_version), statement_timestamp());
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

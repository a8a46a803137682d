CREATE OR REPLACE FUNCTION harness_retention_prune(p_project bigint, p_kind text, p_limit integer) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp SET harness.history_delete = 'on' AS $$
DECLARE
    gone integer;
    doomed bigint[];
BEGIN
    IF p_kind = 'items' THEN
        DELETE FROM sessions_app_sessionitem WHERE id IN (
            SELECT g.id FROM harness_retention_items(p_project) g WHERE g.kept_by IS NULL ORDER BY g.ord LIMIT p_limit);
    ELSIF p_kind = 'events' THEN
        DELETE FROM runs_app_runevent WHERE id IN (
            SELECT g.id FROM harness_retention_events(p_project) g WHERE g.kept_by IS NULL ORDER BY g.ord LIMIT p_limit);
    ELSIF p_kind = 'snapshots' THEN
        DELETE FROM memory_app_contextsnapshot WHERE id IN (
            SELECT g.id FROM harness_retention_snapshots(p_project) g WHERE g.kept_by IS NULL ORDER BY g.ord LIMIT p_limit);
    ELSIF p_kind = 'effects' THEN
        DELETE FROM runs_app_externaleffect WHERE id IN (
            SELECT g.id FROM harness_retention_effects(p_project) g WHERE g.kept_by IS NULL ORDER BY g.ord LIMIT p_limit);
    ELSIF p_kind = 'checkpoints' THEN
        DELETE FROM runs_app_checkpoint WHERE id IN (
            SELECT g.id FROM harness_retention_checkpoints(p_project) g WHERE g.kept_by IS NULL ORDER BY g.ord, g.id LIMIT p_limit);
    ELSIF p_kind = 'runs' THEN
        SELECT coalesce(array_agg(g.id), '{}') INTO doomed FROM (
            SELECT g.id FROM harness_retention_runs(p_project) g WHERE g.kept_by IS NULL ORDER BY g.ord LIMIT p_limit) g;
        UPDATE memory_app_memoryrecord SET source_run_id = NULL WHERE source_run_id = ANY(doomed);
        UPDATE runs_app_run SET last_checkpoint_id = NULL, pending_approval_id = NULL
         WHERE id = ANY(doomed) AND (last_checkpoint_id IS NOT NULL OR pending_approval_id IS NOT NULL);
        DELETE FROM runs_app_runevent WHERE run_id = ANY(doomed);
        DELETE FROM runs_app_nodeexecution WHERE run_id = ANY(doomed);
        DELETE FROM runs_app_checkpointwrite WHERE run_id = ANY(doomed);
        DELETE FROM memory_app_contextsnapshot WHERE run_id = ANY(doomed);
        DELETE FROM runs_app_handoff WHERE origin_run_id = ANY(doomed);
        DELETE FROM runs_app_externaleffect WHERE run_id = ANY(doomed)
            OR approval_id IN (SELECT a.id FROM runs_app_approvalrequest a WHERE a.run_id = ANY(doomed));
        DELETE FROM runs_app_checkpoint WHERE run_id = ANY(doomed);
        DELETE FROM runs_app_approvalvote
         WHERE approval_id IN (SELECT a.id FROM runs_app_approvalrequest a WHERE a.run_id = ANY(doomed));
        DELETE FROM runs_app_approvalrequest WHERE run_id = ANY(doomed);
        DELETE FROM runs_app_standingapproval WHERE run_id = ANY(doomed);
        DELETE FROM runs_app_humanquestion WHERE run_id = ANY(doomed);
        DELETE FROM runs_app_run WHERE id = ANY(doomed) AND project_id = p_project;
    ELSE
        RAISE EXCEPTION 'unknown retention kind %', p_kind USING ERRCODE = 'invalid_parameter_value';
    END IF;
    GET DIAGNOSTICS gone = ROW_COUNT;
    RETURN gone;
END;
$$;

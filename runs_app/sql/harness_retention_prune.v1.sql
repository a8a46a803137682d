CREATE OR REPLACE FUNCTION harness_retention_prune(p_project bigint, p_kind text, p_limit integer) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp SET harness.history_delete = 'on' AS $$
DECLARE
    gone integer;
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
        -- Deepest first: a checkpoint that goes has only descendants that go, and they go before it.
        DELETE FROM runs_app_checkpoint WHERE id IN (
            SELECT g.id FROM harness_retention_checkpoints(p_project) g WHERE g.kept_by IS NULL
             ORDER BY g.ord, g.id LIMIT p_limit);
    ELSE
        RAISE EXCEPTION 'unknown retention kind %', p_kind USING ERRCODE = 'invalid_parameter_value';
    END IF;
    GET DIAGNOSTICS gone = ROW_COUNT;
    RETURN gone;
END;
$$;

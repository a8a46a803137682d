CREATE OR REPLACE FUNCTION harness_retention_needed_runs(p_project bigint)
RETURNS TABLE (id bigint, kept_by text) LANGUAGE sql STABLE AS $$
SELECT DISTINCT r.id, 'shown_by_pending_approval'::text FROM runs_app_run r
 WHERE r.project_id = p_project AND r.session_id IN (
       SELECT w.session_id FROM runs_app_approvalrequest a JOIN runs_app_run w ON w.id = a.run_id
        WHERE a.project_id = p_project AND a.status = 'pending')
UNION
SELECT k.id, 'effect_not_consumed'::text FROM (
    SELECT f.run_id AS id FROM runs_app_externaleffect f
     WHERE f.project_id = p_project AND f.status NOT IN ('consumed', 'refused', 'abandoned') AND f.run_id IS NOT NULL
    UNION
    SELECT a.run_id FROM runs_app_externaleffect f JOIN runs_app_approvalrequest a ON a.id = f.approval_id
     WHERE f.project_id = p_project AND f.status NOT IN ('consumed', 'refused', 'abandoned')) k
$$;

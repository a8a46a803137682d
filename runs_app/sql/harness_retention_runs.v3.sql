CREATE OR REPLACE FUNCTION harness_retention_runs(p_project bigint)
RETURNS TABLE (id bigint, kept_by text, ord bigint) LANGUAGE sql STABLE SET work_mem = '64MB' AS $$
SELECT x.id,
       CASE
         WHEN x.status NOT IN ('succeeded', 'failed', 'cancelled') THEN 'run_live'
         WHEN k0.id IS NOT NULL THEN 'task_current_run'
         WHEN k1.id IS NOT NULL THEN 'shown_by_pending_approval'
         WHEN k2.id IS NOT NULL THEN 'effect_not_consumed'
         WHEN k3.id IS NOT NULL THEN 'handoff_open'
         WHEN k4.id IS NOT NULL THEN 'memory_provenance'
         WHEN k5.id IS NOT NULL THEN 'task_latest_checkpoint'
         WHEN k6.id IS NOT NULL THEN 'continued_by_live_run'
         WHEN k7.id IS NOT NULL THEN 'lineage_of_kept'
         WHEN k8.id IS NOT NULL THEN 'cited_by_other_history'
         WHEN k9.id IS NOT NULL THEN 'items_in_conversation'
       END,
       x.id
  FROM (SELECT r.id, r.status, (p.runs_max_age_days IS NOT NULL AND r.updated_at < now() - make_interval(days => p.runs_max_age_days::int)) OR (p.runs_keep_last IS NOT NULL AND row_number() OVER (ORDER BY r.created_at DESC, r.id DESC) > p.runs_keep_last) AS expired
          FROM runs_app_run r
          JOIN runs_app_retentionpolicy p ON p.project_id = r.project_id
         WHERE r.project_id = p_project) x
  LEFT JOIN (SELECT DISTINCT k.id FROM (
        SELECT max(r.id) AS id FROM runs_app_run r JOIN runs_app_task t ON t.id = r.task_id
         WHERE r.project_id = p_project AND t.status IN ('open', 'active', 'waiting') GROUP BY r.task_id) k) k0 ON k0.id = x.id
  LEFT JOIN (SELECT n.id FROM harness_retention_needed_runs(p_project) n
              WHERE n.kept_by = 'shown_by_pending_approval') k1 ON k1.id = x.id
  LEFT JOIN (SELECT n.id FROM harness_retention_needed_runs(p_project) n
              WHERE n.kept_by = 'effect_not_consumed') k2 ON k2.id = x.id
  LEFT JOIN (SELECT DISTINCT k.id FROM (
        SELECT h.origin_run_id AS id FROM runs_app_handoff h WHERE h.project_id = p_project AND h.status IN ('issued', 'accepted', 'returned')
        UNION
        SELECT h.receiver_run_id FROM runs_app_handoff h
         WHERE h.project_id = p_project AND h.status IN ('issued', 'accepted', 'returned') AND h.receiver_run_id IS NOT NULL) k) k3 ON k3.id = x.id
  LEFT JOIN (SELECT DISTINCT k.id FROM (
        SELECT m.source_run_id AS id FROM memory_app_memoryrecord m
         WHERE m.project_id = p_project AND m.status IN ('active', 'held') AND m.source_run_id IS NOT NULL
        UNION
        SELECT i.run_id FROM memory_app_memoryrecord m
          JOIN sessions_app_sessionitem i ON i.session_id = m.source_session_id AND i.seq = m.source_item_seq
         WHERE m.project_id = p_project AND m.status IN ('active', 'held') AND i.run_id IS NOT NULL) k) k4 ON k4.id = x.id
  LEFT JOIN (SELECT DISTINCT k.id FROM (
        SELECT c.run_id AS id FROM runs_app_task t JOIN runs_app_checkpoint c ON c.id = t.latest_checkpoint_id
         WHERE t.project_id = p_project AND c.run_id IS NOT NULL) k) k5 ON k5.id = x.id
  LEFT JOIN (SELECT DISTINCT k.id FROM (
        SELECT pc.run_id AS id FROM runs_app_checkpoint c
          JOIN runs_app_run lr ON lr.id = c.run_id AND lr.status NOT IN ('succeeded', 'failed', 'cancelled')
          JOIN runs_app_checkpoint pc ON pc.id = c.parent_id
         WHERE c.project_id = p_project AND pc.run_id <> c.run_id) k) k6 ON k6.id = x.id
  LEFT JOIN (SELECT DISTINCT k.id FROM (
        SELECT pc.run_id AS id FROM runs_app_checkpoint c JOIN runs_app_checkpoint pc ON pc.id = c.parent_id
         WHERE c.project_id = p_project AND pc.run_id IS NOT NULL AND c.run_id IS DISTINCT FROM pc.run_id) k) k7 ON k7.id = x.id
  LEFT JOIN (SELECT DISTINCT k.id FROM (
        SELECT c.run_id AS id FROM runs_app_run o JOIN runs_app_checkpoint c ON c.id = o.last_checkpoint_id
         WHERE o.project_id = p_project AND c.run_id <> o.id
        UNION
        SELECT c.run_id FROM runs_app_nodeexecution n
          JOIN runs_app_run o ON o.id = n.run_id JOIN runs_app_checkpoint c ON c.id = n.checkpoint_id
         WHERE o.project_id = p_project AND c.run_id <> n.run_id
        UNION
        SELECT a.run_id FROM runs_app_run o JOIN runs_app_approvalrequest a ON a.id = o.pending_approval_id
         WHERE o.project_id = p_project AND a.run_id <> o.id
        UNION
        SELECT a.run_id FROM runs_app_checkpoint c JOIN runs_app_approvalrequest a ON a.id = c.approval_id
         WHERE c.project_id = p_project AND c.run_id IS DISTINCT FROM a.run_id
        UNION
        SELECT a.run_id FROM runs_app_externaleffect f JOIN runs_app_approvalrequest a ON a.id = f.approval_id
         WHERE f.project_id = p_project AND f.run_id IS DISTINCT FROM a.run_id
        UNION
        SELECT h.receiver_run_id FROM runs_app_handoff h
         WHERE h.project_id = p_project AND h.receiver_run_id IS NOT NULL AND h.receiver_run_id <> h.origin_run_id) k) k8 ON k8.id = x.id
  LEFT JOIN (SELECT DISTINCT k.id FROM (
        SELECT r.id FROM runs_app_run r
         WHERE r.project_id = p_project
           AND EXISTS (SELECT 1 FROM sessions_app_sessionitem i WHERE i.run_id = r.id)) k) k9 ON k9.id = x.id
 WHERE x.expired
$$;

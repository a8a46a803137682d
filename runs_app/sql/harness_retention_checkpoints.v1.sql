CREATE OR REPLACE FUNCTION harness_retention_checkpoints(p_project bigint)
RETURNS TABLE (id bigint, kept_by text, ord bigint) LANGUAGE sql STABLE SET work_mem = '64MB' AS $$
WITH RECURSIVE live AS (
    SELECT r.id, r.task_id FROM runs_app_run r WHERE r.project_id = p_project AND r.status NOT IN ('succeeded', 'failed', 'cancelled')
), judged AS (
    SELECT x.id, x.parent_id, x.depth, x.expired,
           CASE
             WHEN lr.id IS NOT NULL OR lt.task_id IS NOT NULL THEN 'run_live'
             WHEN pa.id IS NOT NULL THEN 'shown_by_pending_approval'
             WHEN tl.id IS NOT NULL THEN 'task_latest_checkpoint'
             WHEN rl.id IS NOT NULL THEN 'run_last_checkpoint'
             WHEN ne.id IS NOT NULL THEN 'node_execution'
           END AS own_rule
      FROM (SELECT c.id, c.parent_id, c.depth, c.run_id, c.task_id, c.approval_id,
                   (p.checkpoints_max_age_days IS NOT NULL
                    AND c.created_at < now() - make_interval(days => p.checkpoints_max_age_days::int))
                   OR (p.checkpoints_keep_last IS NOT NULL
                       AND row_number() OVER (PARTITION BY c.run_id, c.task_id ORDER BY c.id DESC)
                           > p.checkpoints_keep_last) AS expired
              FROM runs_app_checkpoint c
              JOIN runs_app_retentionpolicy p ON p.project_id = c.project_id
             WHERE c.project_id = p_project) x
      LEFT JOIN live lr ON lr.id = x.run_id
      LEFT JOIN (SELECT DISTINCT l.task_id FROM live l WHERE l.task_id IS NOT NULL) lt ON lt.task_id = x.task_id
      LEFT JOIN (SELECT a.id FROM runs_app_approvalrequest a WHERE a.project_id = p_project AND a.status = 'pending')
                pa ON pa.id = x.approval_id
      LEFT JOIN (SELECT DISTINCT t.latest_checkpoint_id AS id FROM runs_app_task t
                  WHERE t.project_id = p_project AND t.latest_checkpoint_id IS NOT NULL) tl ON tl.id = x.id
      LEFT JOIN (SELECT DISTINCT r.last_checkpoint_id AS id FROM runs_app_run r
                  WHERE r.project_id = p_project AND r.last_checkpoint_id IS NOT NULL) rl ON rl.id = x.id
      LEFT JOIN (SELECT DISTINCT n.checkpoint_id AS id FROM runs_app_nodeexecution n
                   JOIN runs_app_run r ON r.id = n.run_id
                  WHERE r.project_id = p_project AND n.checkpoint_id IS NOT NULL) ne ON ne.id = x.id
), anchored (id, parent_id) AS (
    SELECT j.id, j.parent_id FROM judged j WHERE NOT j.expired OR j.own_rule IS NOT NULL
    UNION
    SELECT c.id, c.parent_id FROM runs_app_checkpoint c JOIN anchored a ON c.id = a.parent_id
)
SELECT j.id, coalesce(j.own_rule, CASE WHEN k.id IS NOT NULL THEN 'lineage_of_kept' END), -j.depth::bigint
  FROM judged j
  LEFT JOIN (SELECT DISTINCT a.id FROM anchored a) k ON k.id = j.id
 WHERE j.expired
$$;

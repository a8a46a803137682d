CREATE OR REPLACE FUNCTION harness_retention_snapshots(p_project bigint)
RETURNS TABLE (id bigint, kept_by text, ord bigint) LANGUAGE sql STABLE SET work_mem = '64MB' AS $$
SELECT x.id, CASE WHEN x.status NOT IN ('succeeded', 'failed', 'cancelled') THEN 'run_live' END, x.id
  FROM (SELECT c.id, r.status,
               (p.snapshots_max_age_days IS NOT NULL
                AND c.created_at < now() - make_interval(days => p.snapshots_max_age_days::int))
               OR (p.snapshots_keep_last IS NOT NULL
                   AND row_number() OVER (PARTITION BY c.run_id ORDER BY c.id DESC) > p.snapshots_keep_last)
                 AS expired
          FROM memory_app_contextsnapshot c
          JOIN runs_app_run r ON r.id = c.run_id
          JOIN runs_app_retentionpolicy p ON p.project_id = c.project_id
         WHERE c.project_id = p_project) x
 WHERE x.expired
$$;

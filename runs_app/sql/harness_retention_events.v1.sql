CREATE OR REPLACE FUNCTION harness_retention_events(p_project bigint)
RETURNS TABLE (id bigint, kept_by text, ord bigint) LANGUAGE sql STABLE SET work_mem = '64MB' AS $$
SELECT x.id, CASE WHEN x.status NOT IN ('succeeded', 'failed', 'cancelled') THEN 'run_live' END, x.id
  FROM (SELECT e.id, r.status,
               (p.events_max_age_days IS NOT NULL
                AND e.created_at < now() - make_interval(days => p.events_max_age_days::int))
               OR (p.events_keep_last IS NOT NULL
                   AND row_number() OVER (PARTITION BY e.run_id ORDER BY e.seq DESC) > p.events_keep_last)
                 AS expired
          FROM runs_app_runevent e
          JOIN runs_app_run r ON r.id = e.run_id
          JOIN runs_app_retentionpolicy p ON p.project_id = r.project_id
         WHERE r.project_id = p_project) x
 WHERE x.expired
$$;

CREATE OR REPLACE FUNCTION harness_retention_effects(p_project bigint)
RETURNS TABLE (id bigint, kept_by text, ord bigint) LANGUAGE sql STABLE SET work_mem = '64MB' AS $$
SELECT x.id,
       CASE
         WHEN lr.id IS NOT NULL THEN 'run_live'
         WHEN x.status NOT IN ('consumed', 'refused', 'abandoned') THEN 'effect_not_consumed'
       END,
       x.id
  FROM (SELECT f.id, f.run_id, f.status,
               (p.effects_max_age_days IS NOT NULL
                AND f.created_at < now() - make_interval(days => p.effects_max_age_days::int))
               OR (p.effects_keep_last IS NOT NULL
                   AND row_number() OVER (ORDER BY f.created_at DESC, f.id DESC) > p.effects_keep_last)
                 AS expired
          FROM runs_app_externaleffect f
          JOIN runs_app_retentionpolicy p ON p.project_id = f.project_id
         WHERE f.project_id = p_project) x
  LEFT JOIN (SELECT r.id FROM runs_app_run r WHERE r.project_id = p_project AND r.status NOT IN ('succeeded', 'failed', 'cancelled')) lr
         ON lr.id = x.run_id
 WHERE x.expired
$$;

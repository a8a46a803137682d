CREATE OR REPLACE FUNCTION harness_retention_items(p_project bigint)
RETURNS TABLE (id bigint, kept_by text, ord bigint) LANGUAGE sql STABLE SET work_mem = '64MB' AS $$
SELECT x.id,
       CASE
         WHEN lr.id IS NOT NULL THEN 'run_live'
         WHEN CASE WHEN x.session_id IN (SELECT r.session_id FROM runs_app_approvalrequest a
                                           JOIN runs_app_run r ON r.id = a.run_id
                                          WHERE a.project_id = p_project AND a.status = 'pending')
                   THEN x.seq >= (SELECT min(n.seq) FROM (SELECT j.seq FROM sessions_app_sessionitem j
                                                           WHERE j.session_id = x.session_id
                                                           ORDER BY j.seq DESC LIMIT 10) n)
                        OR (x.session_id, x.seq) IN (
                            SELECT r.session_id, (jsonb_array_elements_text(c.item_seqs))::bigint
                              FROM runs_app_approvalrequest a JOIN runs_app_run r ON r.id = a.run_id
                              JOIN memory_app_contextsnapshot c ON c.run_id = r.id
                             WHERE a.project_id = p_project AND a.status = 'pending'
                               AND jsonb_typeof(c.item_seqs) = 'array')
                   ELSE false END
           THEN 'shown_by_pending_approval'
         WHEN mp.session_id IS NOT NULL THEN 'memory_provenance'
       END,
       x.id
  FROM (SELECT i.id, i.session_id, i.seq, i.run_id,
               (p.items_max_age_days IS NOT NULL
                AND i.created_at < now() - make_interval(days => p.items_max_age_days::int))
               OR (p.items_keep_last IS NOT NULL
                   AND row_number() OVER (PARTITION BY i.session_id ORDER BY i.seq DESC) > p.items_keep_last)
                 AS expired
          FROM sessions_app_sessionitem i
          JOIN sessions_app_session s ON s.id = i.session_id
          JOIN runs_app_retentionpolicy p ON p.project_id = s.project_id
         WHERE s.project_id = p_project) x
  LEFT JOIN (SELECT r.id FROM runs_app_run r WHERE r.project_id = p_project AND r.status NOT IN ('succeeded', 'failed', 'cancelled')) lr
         ON lr.id = x.run_id
  LEFT JOIN (SELECT DISTINCT m.source_session_id AS session_id, m.source_item_seq AS seq
               FROM memory_app_memoryrecord m
              WHERE m.project_id = p_project AND m.status IN ('active', 'held') AND m.source_item_seq IS NOT NULL) mp
         ON mp.session_id = x.session_id AND mp.seq = x.seq
 WHERE x.expired
$$;

CREATE OR REPLACE FUNCTION harness_retention_items(p_project bigint)
RETURNS TABLE (id bigint, kept_by text, ord bigint) LANGUAGE sql STABLE SET work_mem = '64MB' SET jit = off AS $$
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
  -- Only the items the policy lets go are read, through the session's indexes: per session, the seq just
  -- past its newest keep_last (the (keep_last+1)-th newest, walked on the (session, seq) index, as v1's
  -- row_number() > keep_last counted), then the items at or below it, and those older than the age above it.
  -- v1 numbered every item of the project in a window to find them, so each of a pass's statements read and
  -- sorted all of the project's items: its time grew with the rows it keeps. The bounds are MATERIALIZED and
  -- jit off: the plan is costed for the whole project's sets (its estimates pass jit_above_cost), yet it reads a
  -- few thousand rows; compiling it took ~1.4 s a statement on the bench host, reading it ~5 ms.
  -- the two ranges are separate lateral scans, each a row comparison that only its two-column index
  -- ((session, seq), (session, created_at, id)) answers: the planner cannot fold them into one scan of the
  -- table, nor into a walk of all of a session's items on the smaller session_id index. (seq >= 0: a check.)
  FROM (WITH bound AS MATERIALIZED (
            SELECT s.id AS session_id,
                   CASE WHEN p.items_keep_last IS NOT NULL THEN
                        (SELECT j.seq FROM sessions_app_sessionitem j WHERE j.session_id = s.id
                          ORDER BY j.seq DESC OFFSET p.items_keep_last LIMIT 1) END AS seq,
                   CASE WHEN p.items_max_age_days IS NOT NULL
                        THEN now() - make_interval(days => p.items_max_age_days::int) END AS before
              FROM runs_app_retentionpolicy p JOIN sessions_app_session s ON s.project_id = p.project_id
             WHERE p.project_id = p_project)
        SELECT i.id, i.session_id, i.seq, i.run_id
          FROM bound b CROSS JOIN LATERAL (
               SELECT i.id, i.session_id, i.seq, i.run_id FROM sessions_app_sessionitem i
                WHERE b.seq IS NOT NULL AND i.session_id = b.session_id AND i.seq <= b.seq) i
        UNION ALL
        SELECT i.id, i.session_id, i.seq, i.run_id
          FROM bound b CROSS JOIN LATERAL (
               SELECT i.id, i.session_id, i.seq, i.run_id FROM sessions_app_sessionitem i
                WHERE b.before IS NOT NULL AND i.session_id = b.session_id AND i.created_at < b.before
                  AND (b.seq IS NULL OR i.seq > b.seq)) i) x
  LEFT JOIN (SELECT r.id FROM runs_app_run r WHERE r.project_id = p_project AND r.status NOT IN ('succeeded', 'failed', 'cancelled')) lr
         ON lr.id = x.run_id
  LEFT JOIN (SELECT DISTINCT m.source_session_id AS session_id, m.source_item_seq AS seq
               FROM memory_app_memoryrecord m
              WHERE m.project_id = p_project AND m.status IN ('active', 'held') AND m.source_item_seq IS NOT NULL) mp
         ON mp.session_id = x.session_id AND mp.seq = x.seq
$$;

"""Retention (issue 20, part 1): each project's policy, and the keep rules as SQL, written once.

1. `runs_app_retentionpolicy`: per project, by kind, a maximum age in days and a count to keep.
2. One function per kind, `harness_retention_<kind>(project)`: the rows the policy lets go (older than the
   age, or beyond the newest `keep_last` of their scope), each with `kept_by`, the first keep rule that holds
   (NULL: nothing keeps it). Each large rule is a LEFT JOIN to the project's set (live runs, runs' last
   checkpoints, the kept lineage...), a hash join once per statement, rather than a correlated EXISTS:
   runs' `last_checkpoint` has no index (it keeps pointer updates HOT), and a lookup per row made a pass
   quadratic. The small sets (pending approvals' sessions) stay `IN` subqueries. The dry run counts these rows; the pass deletes the ones whose `kept_by` is NULL.
   Both read the same function, so they cannot disagree.
3. `harness_retention_prune(project, kind, limit)`: deletes at most `limit` rows of one kind that nothing
   keeps, in one statement. SECURITY DEFINER and owned by the tables' owner (the role migrating), with
   `harness.history_delete` set for the call only: the one door through the triggers of migration 0013 for
   run events and checkpoints. The runtime role may call it, and it can do no more than the policy and the
   keep rules allow; it cannot delete an event or a checkpoint any other way.

Keep rules (a run is live unless it succeeded, failed or was cancelled: a waiting, blocked or resumable run is
live):
- run_live: the row belongs to a live run (an item written by one, a checkpoint of one or of its task).
- shown_by_pending_approval: an item the approval page shows (the session's newest APPROVAL_PAGE_ITEMS, as
  sessions_app.trimming) or the pending run's context snapshots list; a pending approval's checkpoint.
- memory_provenance: an item that an active (or held) memory record names as its source.
- effect_not_consumed: an effect that is neither consumed nor finished otherwise (refused, abandoned).
- task_latest_checkpoint, run_last_checkpoint, node_execution: a checkpoint that a task, a run or a node
  execution points at; lineage_of_kept: an ancestor of any checkpoint that stays (what a resume verifies, and
  what the parent foreign key needs). So a checkpoint goes only with all its descendants, deepest first.
"""

import django.db.models.deletion
from django.db import migrations, models

LIVE = "NOT IN ('succeeded', 'failed', 'cancelled')"

FUNCTIONS = f"""
CREATE FUNCTION harness_retention_items(p_project bigint)
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
  LEFT JOIN (SELECT r.id FROM runs_app_run r WHERE r.project_id = p_project AND r.status {LIVE}) lr
         ON lr.id = x.run_id
  LEFT JOIN (SELECT DISTINCT m.source_session_id AS session_id, m.source_item_seq AS seq
               FROM memory_app_memoryrecord m
              WHERE m.project_id = p_project AND m.status IN ('active', 'held') AND m.source_item_seq IS NOT NULL) mp
         ON mp.session_id = x.session_id AND mp.seq = x.seq
 WHERE x.expired
$$;

CREATE FUNCTION harness_retention_events(p_project bigint)
RETURNS TABLE (id bigint, kept_by text, ord bigint) LANGUAGE sql STABLE SET work_mem = '64MB' AS $$
SELECT x.id, CASE WHEN x.status {LIVE} THEN 'run_live' END, x.id
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

CREATE FUNCTION harness_retention_snapshots(p_project bigint)
RETURNS TABLE (id bigint, kept_by text, ord bigint) LANGUAGE sql STABLE SET work_mem = '64MB' AS $$
SELECT x.id, CASE WHEN x.status {LIVE} THEN 'run_live' END, x.id
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

CREATE FUNCTION harness_retention_effects(p_project bigint)
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
  LEFT JOIN (SELECT r.id FROM runs_app_run r WHERE r.project_id = p_project AND r.status {LIVE}) lr
         ON lr.id = x.run_id
 WHERE x.expired
$$;

CREATE FUNCTION harness_retention_checkpoints(p_project bigint)
RETURNS TABLE (id bigint, kept_by text, ord bigint) LANGUAGE sql STABLE SET work_mem = '64MB' AS $$
WITH RECURSIVE live AS (
    SELECT r.id, r.task_id FROM runs_app_run r WHERE r.project_id = p_project AND r.status {LIVE}
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

CREATE FUNCTION harness_retention_prune(p_project bigint, p_kind text, p_limit integer) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = {{schema}}, pg_temp SET harness.history_delete = 'on' AS $$
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
"""

DROP = """
DROP FUNCTION IF EXISTS harness_retention_prune(bigint, text, integer);
DROP FUNCTION IF EXISTS harness_retention_items(bigint);
DROP FUNCTION IF EXISTS harness_retention_events(bigint);
DROP FUNCTION IF EXISTS harness_retention_snapshots(bigint);
DROP FUNCTION IF EXISTS harness_retention_effects(bigint);
DROP FUNCTION IF EXISTS harness_retention_checkpoints(bigint);
"""


def forwards(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:  # raw: the bodies' '%' are not placeholders
        cursor.execute("SELECT quote_ident(current_schema())")
        (schema,) = cursor.fetchone()
        cursor.execute(FUNCTIONS.replace("{schema}", schema))


def backwards(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [
        ("runs_app", "0018_handoff_receiver_token"),
        ("harness", "0003_token_expiry_worker_heartbeat"),
        ("sessions_app", "0003_session_context_budget"),
        ("memory_app", "0004_contextsnapshot_manifest"),
    ]
    operations = [
        migrations.CreateModel(
            name="RetentionPolicy",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("items_max_age_days", models.PositiveIntegerField(blank=True, null=True)),
                ("items_keep_last", models.PositiveIntegerField(blank=True, help_text="Per session.", null=True)),
                ("events_max_age_days", models.PositiveIntegerField(blank=True, null=True)),
                ("events_keep_last", models.PositiveIntegerField(blank=True, help_text="Per run.", null=True)),
                ("checkpoints_max_age_days", models.PositiveIntegerField(blank=True, null=True)),
                ("checkpoints_keep_last", models.PositiveIntegerField(blank=True, help_text="Per run (or task).",
                                                                      null=True)),
                ("effects_max_age_days", models.PositiveIntegerField(blank=True, null=True)),
                ("effects_keep_last", models.PositiveIntegerField(blank=True, help_text="Per project.", null=True)),
                ("snapshots_max_age_days", models.PositiveIntegerField(blank=True, null=True)),
                ("snapshots_keep_last", models.PositiveIntegerField(blank=True, help_text="Per run.", null=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("project", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE,
                                                 related_name="retention_policy", to="harness.project")),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]

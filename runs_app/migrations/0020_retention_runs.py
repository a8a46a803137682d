"""Retention of finished runs themselves (issue 20, part 1): a run that goes takes its whole history with it.

1. `runs_app_retentionpolicy` gains `runs_max_age_days` (age since the run's last change: for a finished run,
   when it finished) and `runs_keep_last` (the newest runs of the project stay; live ones count and stay).
2. `harness_retention_runs(project)`: like the other kinds' functions (migration 0019), the runs the policy lets
   go, each with `kept_by`, the first keep rule that holds. Its "expired" expression comes from `_expired`, the
   one template of that expression (0019 spells it out per kind; its functions are left as they are).
3. `harness_retention_prune` is replaced by one generated from the kinds' tables, with a `runs` branch that
   deletes, in one call, the runs no rule keeps and every row that points at them: events, node executions,
   LangGraph writes, context snapshots, the session items they wrote, handoffs they issued, their effects
   (and those bound to their approvals), checkpoints, approvals; a memory record's `source_run` becomes NULL
   (Django's SET_NULL, which PostgreSQL does not do by itself; a live record's run is kept instead). The
   foreign keys are deferred, so the run's own pointers (last checkpoint, pending approval) need no ordering.
4. A trigger refuses DELETE on runs_app_run except through the owner's history door (migration 0013), as for
   run events: the runtime role deletes runs only through the prune function.

Keep rules for a run (a rule on a row that is not the run's own names what still needs it):
- run_live: the run is not succeeded, failed or cancelled (waiting, blocked, resumable).
- task_current_run: it is the newest run of a task that is not finished (open, active, waiting).
- shown_by_pending_approval: its session has a pending approval, whose page shows that session's items.
- effect_not_consumed: an effect of it (or of one of its approvals) is neither consumed, refused nor abandoned.
- handoff_open: a handoff it issued or received is still open (issued, accepted, returned).
- memory_provenance: an active or held memory record names it, or an item it wrote, as its source.
- task_latest_checkpoint: a task's latest checkpoint is one of its checkpoints.
- continued_by_live_run: a live run's checkpoint has its parent here (a live fork of it, or the task's next run).
- lineage_of_kept: any other checkpoint (another run's, or a task's own) has its parent here: the line a resume
  verifies, and the parent foreign key. So a run continued by another goes only after that one has gone (the
  pass's next round re-reads the rules).
- cited_by_other_history: another run's last checkpoint or node execution points at one of its checkpoints,
  another run's pending approval, checkpoint or effect at one of its approvals, or it is the receiver of another
  run's handoff (which goes with its origin run).
"""

from django.db import migrations, models

LIVE = "NOT IN ('succeeded', 'failed', 'cancelled')"
TASK_LIVE = "IN ('open', 'active', 'waiting')"
EFFECT_OPEN = "NOT IN ('consumed', 'refused', 'abandoned')"
HANDOFF_OPEN = "IN ('issued', 'accepted', 'returned')"
MEMORY_LIVE = "IN ('active', 'held')"


def _expired(kind: str, *, age_column: str, order: str, partition: str = "") -> str:
    """Whether a row of `kind` is past the policy `p`: older than `<kind>_max_age_days` (by `age_column`), or
    beyond the newest `<kind>_keep_last` of its scope (`partition`, ordered newest first by `order`)."""
    over = f"PARTITION BY {partition} ORDER BY {order}" if partition else f"ORDER BY {order}"
    return (f"(p.{kind}_max_age_days IS NOT NULL"
            f" AND {age_column} < now() - make_interval(days => p.{kind}_max_age_days::int))"
            f" OR (p.{kind}_keep_last IS NOT NULL AND row_number() OVER ({over}) > p.{kind}_keep_last)")


# Each rule: its name and the set of run ids it keeps (the project's rows only), in the order the dry run names
# them. One hash join per rule and statement, not a lookup per run (runs' last_checkpoint has no index).
RUN_RULES: tuple[tuple[str, str], ...] = (
    ("task_current_run", f"""
        SELECT max(r.id) AS id FROM runs_app_run r JOIN runs_app_task t ON t.id = r.task_id
         WHERE r.project_id = p_project AND t.status {TASK_LIVE} GROUP BY r.task_id"""),
    ("shown_by_pending_approval", """
        SELECT r.id FROM runs_app_run r WHERE r.project_id = p_project AND r.session_id IN (
            SELECT w.session_id FROM runs_app_approvalrequest a JOIN runs_app_run w ON w.id = a.run_id
             WHERE a.project_id = p_project AND a.status = 'pending')"""),
    ("effect_not_consumed", f"""
        SELECT f.run_id AS id FROM runs_app_externaleffect f
         WHERE f.project_id = p_project AND f.status {EFFECT_OPEN} AND f.run_id IS NOT NULL
        UNION
        SELECT a.run_id FROM runs_app_externaleffect f JOIN runs_app_approvalrequest a ON a.id = f.approval_id
         WHERE f.project_id = p_project AND f.status {EFFECT_OPEN}"""),
    ("handoff_open", f"""
        SELECT h.origin_run_id AS id FROM runs_app_handoff h WHERE h.project_id = p_project AND h.status {HANDOFF_OPEN}
        UNION
        SELECT h.receiver_run_id FROM runs_app_handoff h
         WHERE h.project_id = p_project AND h.status {HANDOFF_OPEN} AND h.receiver_run_id IS NOT NULL"""),
    ("memory_provenance", f"""
        SELECT m.source_run_id AS id FROM memory_app_memoryrecord m
         WHERE m.project_id = p_project AND m.status {MEMORY_LIVE} AND m.source_run_id IS NOT NULL
        UNION
        SELECT i.run_id FROM memory_app_memoryrecord m
          JOIN sessions_app_sessionitem i ON i.session_id = m.source_session_id AND i.seq = m.source_item_seq
         WHERE m.project_id = p_project AND m.status {MEMORY_LIVE} AND i.run_id IS NOT NULL"""),
    ("task_latest_checkpoint", """
        SELECT c.run_id AS id FROM runs_app_task t JOIN runs_app_checkpoint c ON c.id = t.latest_checkpoint_id
         WHERE t.project_id = p_project AND c.run_id IS NOT NULL"""),
    ("continued_by_live_run", f"""
        SELECT pc.run_id AS id FROM runs_app_checkpoint c
          JOIN runs_app_run lr ON lr.id = c.run_id AND lr.status {LIVE}
          JOIN runs_app_checkpoint pc ON pc.id = c.parent_id
         WHERE c.project_id = p_project AND pc.run_id <> c.run_id"""),
    ("lineage_of_kept", """
        SELECT pc.run_id AS id FROM runs_app_checkpoint c JOIN runs_app_checkpoint pc ON pc.id = c.parent_id
         WHERE c.project_id = p_project AND pc.run_id IS NOT NULL AND c.run_id IS DISTINCT FROM pc.run_id"""),
    ("cited_by_other_history", """
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
         WHERE h.project_id = p_project AND h.receiver_run_id IS NOT NULL AND h.receiver_run_id <> h.origin_run_id"""),
)


def _runs_function() -> str:
    joins = "\n".join(f"  LEFT JOIN (SELECT DISTINCT k.id FROM ({sql}) k) k{n} ON k{n}.id = x.id"
                      for n, (_, sql) in enumerate(RUN_RULES))
    cases = "\n".join(f"         WHEN k{n}.id IS NOT NULL THEN '{name}'" for n, (name, _) in enumerate(RUN_RULES))
    expired = _expired("runs", age_column="r.updated_at", order="r.created_at DESC, r.id DESC")
    return f"""
CREATE OR REPLACE FUNCTION harness_retention_runs(p_project bigint)
RETURNS TABLE (id bigint, kept_by text, ord bigint) LANGUAGE sql STABLE SET work_mem = '64MB' AS $$
SELECT x.id,
       CASE
         WHEN x.status {LIVE} THEN 'run_live'
{cases}
       END,
       x.id
  FROM (SELECT r.id, r.status, {expired} AS expired
          FROM runs_app_run r
          JOIN runs_app_retentionpolicy p ON p.project_id = r.project_id
         WHERE r.project_id = p_project) x
{joins}
 WHERE x.expired
$$;
"""


# The kinds whose rows one DELETE removes (migration 0019's branches), by the table that holds them.
ROW_KINDS: dict[str, str] = {
    "items": "sessions_app_sessionitem",
    "events": "runs_app_runevent",
    "snapshots": "memory_app_contextsnapshot",
    "effects": "runs_app_externaleffect",
    "checkpoints": "runs_app_checkpoint",
}

# A run's whole history, in one call: what points at the runs before the runs (the foreign keys are deferred,
# so within the call the order matters only for readability). `doomed` is the runs no rule keeps.
RUNS_BRANCH = """
        SELECT coalesce(array_agg(g.id), '{}') INTO doomed FROM (
            SELECT g.id FROM harness_retention_runs(p_project) g WHERE g.kept_by IS NULL ORDER BY g.ord LIMIT p_limit) g;
        UPDATE memory_app_memoryrecord SET source_run_id = NULL WHERE source_run_id = ANY(doomed);
        DELETE FROM runs_app_runevent WHERE run_id = ANY(doomed);
        DELETE FROM runs_app_nodeexecution WHERE run_id = ANY(doomed);
        DELETE FROM runs_app_checkpointwrite WHERE run_id = ANY(doomed);
        DELETE FROM memory_app_contextsnapshot WHERE run_id = ANY(doomed);
        DELETE FROM sessions_app_sessionitem WHERE run_id = ANY(doomed);
        DELETE FROM runs_app_handoff WHERE origin_run_id = ANY(doomed);
        DELETE FROM runs_app_externaleffect WHERE run_id = ANY(doomed)
            OR approval_id IN (SELECT a.id FROM runs_app_approvalrequest a WHERE a.run_id = ANY(doomed));
        DELETE FROM runs_app_checkpoint WHERE run_id = ANY(doomed);
        DELETE FROM runs_app_approvalrequest WHERE run_id = ANY(doomed);
        DELETE FROM runs_app_run WHERE id = ANY(doomed) AND project_id = p_project;"""


def _prune_function(with_runs: bool) -> str:
    branches = []
    for kind, table in ROW_KINDS.items():
        # Checkpoints deepest first (ord is -depth): a checkpoint that goes has only descendants that go.
        order = "g.ord, g.id" if kind == "checkpoints" else "g.ord"
        branches.append(f"""
        DELETE FROM {table} WHERE id IN (
            SELECT g.id FROM harness_retention_{kind}(p_project) g WHERE g.kept_by IS NULL ORDER BY {order} LIMIT p_limit);""")
    if with_runs:
        branches.append(RUNS_BRANCH)
    kinds = [*ROW_KINDS, "runs"] if with_runs else list(ROW_KINDS)
    body = "".join(f"\n    {'IF' if n == 0 else 'ELSIF'} p_kind = '{kind}' THEN{branch}"
                   for n, (kind, branch) in enumerate(zip(kinds, branches, strict=True)))
    return f"""
CREATE OR REPLACE FUNCTION harness_retention_prune(p_project bigint, p_kind text, p_limit integer) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = {{schema}}, pg_temp SET harness.history_delete = 'on' AS $$
DECLARE
    gone integer;
    doomed bigint[];
BEGIN{body}
    ELSE
        RAISE EXCEPTION 'unknown retention kind %', p_kind USING ERRCODE = 'invalid_parameter_value';
    END IF;
    GET DIAGNOSTICS gone = ROW_COUNT;
    RETURN gone;
END;
$$;
"""


RUN_DELETE_DOOR = """
CREATE TRIGGER runs_app_run_no_delete BEFORE DELETE ON runs_app_run
    FOR EACH ROW EXECUTE FUNCTION harness_refuse_history_delete();
"""


def forwards(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:  # raw: the bodies' '%' are not placeholders
        cursor.execute("SELECT quote_ident(current_schema())")
        (schema,) = cursor.fetchone()
        cursor.execute(_runs_function())
        cursor.execute(_prune_function(with_runs=True).replace("{schema}", schema))
        cursor.execute(RUN_DELETE_DOOR)


def backwards(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT quote_ident(current_schema())")
        (schema,) = cursor.fetchone()
        cursor.execute("DROP TRIGGER IF EXISTS runs_app_run_no_delete ON runs_app_run")
        cursor.execute(_prune_function(with_runs=False).replace("{schema}", schema))
        cursor.execute("DROP FUNCTION IF EXISTS harness_retention_runs(bigint)")


class Migration(migrations.Migration):
    dependencies = [
        ("runs_app", "0019_retention"),
        ("memory_app", "0004_contextsnapshot_manifest"),
    ]
    operations = [
        migrations.AddField(
            model_name="retentionpolicy", name="runs_max_age_days",
            field=models.PositiveIntegerField(blank=True, null=True,
                                              help_text="Finished runs, by the time of their last change."),
        ),
        migrations.AddField(
            model_name="retentionpolicy", name="runs_keep_last",
            field=models.PositiveIntegerField(blank=True, null=True, help_text="Per project (live runs count too)."),
        ),
        # The function reads the new columns: they come first.
        migrations.RunPython(forwards, backwards),
    ]

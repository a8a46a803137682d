"""A run's frequent rewrites (checkpoint pointer, event seq, metrics) stay HOT updates on PostgreSQL.

An UPDATE that changes no indexed column can put the new row version on the same page and touch no
index (a HOT update); one that changes an indexed column writes an entry into every index of the
table. A run's row is rewritten by each checkpoint, event and metrics merge, so an index on a column
those writes change would make each of them pay for all eight indexes.
"""

import pytest
from django.db import connection

from runs_app.services import checkpoint_create, run_event_append, run_metrics_merge
from tests import factories

pytestmark = pytest.mark.django_db

HOT_COLUMNS = {"cursor", "last_checkpoint_id", "last_event_seq", "metrics", "updated_at", "version"}


def _indexed_columns(table: str) -> set[str]:
    """Every column an index of `table` holds as a key or names in its predicate or expression."""
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT DISTINCT a.attname
              FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum > 0
             WHERE i.indrelid = %s::regclass
               AND (a.attnum = ANY(i.indkey)
                    OR pg_get_expr(i.indpred, i.indrelid) ~ ('\\m' || a.attname || '\\M')
                    OR pg_get_expr(i.indexprs, i.indrelid) ~ ('\\m' || a.attname || '\\M'))
        """, [table])
        return {row[0] for row in cursor.fetchall()}


def _updates_in_this_transaction(table: str) -> tuple[int, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = %s", [table])
        row = cursor.fetchone()
        return (row[0], row[1]) if row else (0, 0)


def test_no_index_of_runs_holds_a_column_the_frequent_writes_change():
    assert _indexed_columns("runs_app_run") & HOT_COLUMNS == set()
    assert "status" in _indexed_columns("runs_app_run")  # the query sees real indexes


def test_the_runs_table_leaves_room_on_each_page_for_hot_updates():
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'runs_app_run'")
        assert "fillfactor=85" in (cursor.fetchone()[0] or [])


def test_checkpoints_events_and_metrics_rewrite_the_run_without_touching_its_indexes(project):
    run = factories.make_run(project)
    before = _updates_in_this_transaction("runs_app_run")
    parent = None
    for n in range(20):
        parent = checkpoint_create(project=project.pk, run_id=run.pk, parent_id=parent, cursor={"n": n}).pk
        run_event_append(project=project.pk, run_id=run.pk, kind="note", data={"n": n})
    run_metrics_merge(project=project.pk, run_id=run.pk, metrics={"steps": 20})
    after = _updates_in_this_transaction("runs_app_run")
    updates, hot = after[0] - before[0], after[1] - before[1]
    assert updates == 41
    # Inside one transaction no old version can be pruned, so the 41 versions fill the run's page (shared with
    # whatever rows the database put there before); the version that no longer fits moves to a fresh page, a
    # non-HOT update, once per page filled. An indexed column among the written ones would make every one of the
    # 41 non-HOT: at most two overflows is the page, not an index.
    assert updates - hot <= 2, (updates, hot)

"""A run's last checkpoint is one of its own checkpoints, and deleting a checkpoint stops scanning every run.

Django's foreign key runs.last_checkpoint -> checkpoint(id) made PostgreSQL check, for each deleted checkpoint,
that no run points at it: `WHERE last_checkpoint_id = $1`, a sequential scan of all runs, since that column has
no index (an index would cost every checkpoint write its HOT pointer update, README "Layout"). A retention pass
deleted checkpoints at about 200 a second on 100,000 runs (bench/README.md, "Retention").

The key becomes (id, last_checkpoint_id) -> checkpoint(run_id, id): the same guarantee (a run points only at a
stored checkpoint; a checkpoint a run points at cannot be deleted), plus that it is one of the run's own, which
every writer already keeps (checkpoint_create and the thread write insert it with the run's id). The check on a
deleted checkpoint becomes `WHERE id = $1 AND last_checkpoint_id = $2`: the runs' primary key. It needs a unique
index on checkpoint(run_id, id): the (run, -id) index made unique (id alone is), so no index is added.
Deferrable, initially deferred, as the key it replaces.
"""

from django.db import migrations, models

ADD_KEY = """
ALTER TABLE runs_app_run ADD CONSTRAINT run_last_checkpoint_of_run FOREIGN KEY (id, last_checkpoint_id)
    REFERENCES runs_app_checkpoint (run_id, id) DEFERRABLE INITIALLY DEFERRED
"""
DROP_KEY = "ALTER TABLE runs_app_run DROP CONSTRAINT run_last_checkpoint_of_run"


class Migration(migrations.Migration):
    dependencies = [
        ("runs_app", "0021_retention_runs_pointers_first"),
    ]
    operations = [
        migrations.AlterField(
            model_name="run",
            name="last_checkpoint",
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True,
                                    on_delete=models.deletion.SET_NULL, related_name="+", to="runs_app.checkpoint"),
        ),
        migrations.RemoveIndex(model_name="checkpoint", name="runs_app_ch_run_id_f3e702_idx"),
        migrations.AddConstraint(
            model_name="checkpoint",
            constraint=models.UniqueConstraint(models.F("run"), models.F("id").desc(),
                                               name="checkpoint_run_id_unique"),
        ),
        migrations.RunSQL(ADD_KEY, DROP_KEY),
    ]

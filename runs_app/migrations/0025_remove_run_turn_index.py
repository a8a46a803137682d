"""Run.turn_index goes (issue 30): nothing ever wrote it, so the run inspector said "turn 0" of every run. A
session's turns are its items (sessions_app), numbered by their seq; a run is one invocation within them."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("runs_app", "0024_checkpoint_json_as_written")]

    operations = [migrations.RemoveField(model_name="run", name="turn_index")]

from django.db import migrations, models


class Migration(migrations.Migration):
    """The console's runs list: each project's runs newest first, and blocked runs by their step."""

    dependencies = [
        ("runs_app", "0010_handoffs"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="run",
            index=models.Index(fields=["project", "-created_at", "-id"], name="run_project_created"),
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(condition=models.Q(("blocked_step", ""), _negated=True),
                               fields=["project", "blocked_step"], name="run_blocked_step"),
        ),
    ]

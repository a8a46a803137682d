from django.db import migrations, models


class Migration(migrations.Migration):
    """An effect's intent and an approval request check the approvals that hold their idempotency key (issue 19)."""

    dependencies = [
        ('runs_app', '0008_langgraph_threads'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='approvalrequest',
            index=models.Index(fields=['project', 'idempotency_key'], name='approval_key_per_project'),
        ),
    ]

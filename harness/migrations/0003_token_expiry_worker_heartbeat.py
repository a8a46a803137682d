from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("harness", "0002_audit_chain"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name="WorkerHeartbeat",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("hostname", models.CharField(max_length=200, unique=True)),
                ("last_seen", models.DateTimeField()),
                ("queue_lag_seconds", models.FloatField(default=0.0)),
            ],
        ),
    ]

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    """The audit chain's columns and head (runs_app 0013 adds the chaining trigger and chains the entries
    already there)."""

    dependencies = [
        ("harness", "0001_initial"),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditentry",
            name="created_at",
            field=models.DateTimeField(db_index=True, default=django.utils.timezone.now),
        ),
        migrations.AddField(
            model_name="auditentry",
            name="seq",
            field=models.PositiveBigIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="auditentry",
            name="prev_hash",
            field=models.CharField(blank=True, default="", editable=False, max_length=64),
        ),
        migrations.AddField(
            model_name="auditentry",
            name="hash",
            field=models.CharField(blank=True, default="", editable=False, max_length=64),
        ),
        migrations.AddField(
            model_name="auditentry",
            name="mac",
            field=models.CharField(blank=True, default="", editable=False, max_length=64),
        ),
        migrations.AddConstraint(
            model_name="auditentry",
            constraint=models.UniqueConstraint(fields=("project", "seq"), name="audit_entry_seq_unique"),
        ),
        migrations.CreateModel(
            name="AuditChainHead",
            fields=[
                ("project", models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, primary_key=True,
                                                 related_name="+", serialize=False, to="harness.project")),
                ("seq", models.PositiveBigIntegerField()),
                ("prev_hash", models.CharField(max_length=64)),
                ("hash", models.CharField(max_length=64)),
            ],
        ),
    ]

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """The audit chain's last verification per project (the console's /audit/) and the index its pages seek."""

    dependencies = [
        ('harness', '0003_token_expiry_worker_heartbeat'),
    ]

    operations = [
        migrations.CreateModel(
            name='AuditVerification',
            fields=[
                ('project', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, primary_key=True, related_name='+', serialize=False, to='harness.project')),
                ('verified_seq', models.PositiveBigIntegerField(default=0)),
                ('verified_hash', models.CharField(blank=True, default='', max_length=64)),
                ('head_seq', models.PositiveBigIntegerField(default=0)),
                ('breaks', models.PositiveIntegerField(default=0)),
                ('broken_seq', models.PositiveBigIntegerField(blank=True, null=True)),
                ('broken_entry_id', models.BigIntegerField(blank=True, null=True)),
                ('broken_reason', models.TextField(blank=True, default='')),
                ('entries_walked', models.PositiveBigIntegerField(default=0)),
                ('from_start', models.BooleanField(default=True)),
                ('checked_at', models.DateTimeField()),
                ('checked_by', models.CharField(max_length=200)),
            ],
        ),
        migrations.AddIndex(
            model_name='auditentry',
            index=models.Index(fields=['project', '-created_at', '-id'], name='audit_entry_project_newest'),
        ),
    ]

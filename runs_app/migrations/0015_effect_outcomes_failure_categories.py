# Issue 16, sections 3 and 4: refused and abandoned effects, a person's decision on an unknown outcome, and
# failure categories on runs, node executions and effects. Every new column has a database default, so the
# hand-written INSERTs (runs_app.services.effects._INTEND_SQL) need not name them.

from django.db import migrations, models

CATEGORIES = [('transient', 'Transient'), ('invalid_input', 'Invalid Input'), ('permission', 'Permission'),
              ('semantic', 'Semantic'), ('irreversible', 'Irreversible')]
EFFECT_STATUSES = [('intended', 'Intended'), ('dispatched', 'Dispatched'), ('delivered', 'Delivered'),
                   ('consumed', 'Consumed'), ('conflict', 'Conflict'), ('unknown', 'Unknown'), ('refused', 'Refused'),
                   ('abandoned', 'Abandoned')]


def _category() -> models.CharField:
    return models.CharField(blank=True, choices=CATEGORIES, db_default='', default='', max_length=16)


class Migration(migrations.Migration):

    dependencies = [
        ('runs_app', '0014_run_text_search'),
    ]

    operations = [
        migrations.AddField(model_name='run', name='failure_category', field=_category()),
        migrations.AddField(model_name='nodeexecution', name='failure_category', field=_category()),
        migrations.AddField(model_name='externaleffect', name='failure_category', field=_category()),
        migrations.AddField(model_name='externaleffect', name='answer', field=models.JSONField(blank=True, null=True)),
        migrations.AddField(model_name='externaleffect', name='resolution',
                            field=models.JSONField(blank=True, null=True)),
        migrations.AddField(model_name='externaleffect', name='retry_authorized',
                            field=models.BooleanField(db_default=False, default=False)),
        migrations.AlterField(model_name='externaleffect', name='status',
                              field=models.CharField(choices=EFFECT_STATUSES, default='intended', max_length=16)),
        migrations.RemoveConstraint(model_name='externaleffect', name='effect_status_valid'),
        migrations.AddConstraint(
            model_name='externaleffect',
            constraint=models.CheckConstraint(condition=models.Q(('status__in', [s for s, _ in EFFECT_STATUSES])),
                                              name='effect_status_valid'),
        ),
        migrations.AddConstraint(
            model_name='externaleffect',
            constraint=models.CheckConstraint(
                condition=models.Q(('status', 'refused'), _negated=True) | models.Q(('answer__isnull', False)),
                name='effect_refusal_answer_recorded'),
        ),
    ]

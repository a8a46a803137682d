"""The flush between transactional tests (tests/fast_flush.py) empties every table, append-only ones included, and
leaves the append-only triggers refusing a DELETE outside it."""

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection, transaction
from django.db.utils import IntegrityError

from harness.actors import Actor
from harness.audit import audit_record
from harness.models import AuditEntry
from runs_app.models import Checkpoint, RunEvent
from tests import factories
from tests.worker.support import demo_run

# Re-created by the flush's post_migrate signal, as after Django's own TRUNCATE.
RECREATED = {"django_content_type", "auth_permission"}


@pytest.mark.django_db(transaction=True)
def test_the_flush_empties_every_table_and_the_append_only_triggers_still_refuse_deletes() -> None:
    run = demo_run()
    audit_record(project=run.project, actor=Actor.for_agent("flush-test"), action="memory.accepted", target=run)
    factories.make_user("rita", role="reviewer", projects=[run.project])
    assert Checkpoint.objects.exists() and RunEvent.objects.exists() and AuditEntry.objects.exists()

    with pytest.raises(IntegrityError), transaction.atomic():  # the trigger, outside a flush
        AuditEntry.objects.all().delete()

    call_command("flush", verbosity=0, interactive=False, reset_sequences=False, allow_cascade=False)

    tables = sorted(model._meta.db_table for model in apps.get_models(include_auto_created=True)
                    if model._meta.managed and not model._meta.proxy)
    assert len(tables) > 40, tables
    with connection.cursor() as cursor:
        left = {}
        for table in tables:
            cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")  # noqa: S608 - model tables
            left[table] = cursor.fetchone()[0]
        cursor.execute("SHOW session_replication_role")
        role = cursor.fetchone()[0]
    assert {table for table, rows in left.items() if rows} <= RECREATED, left
    assert left["django_content_type"] > 0  # post_migrate ran, as after a TRUNCATE
    assert role == "origin"  # SET LOCAL ended with the flush's transaction

    # The triggers are back in force: a new entry cannot be deleted.
    project = factories.make_project("after")
    audit_record(project=project, actor=Actor.for_agent("flush-test"), action="memory.accepted", target=project)
    with pytest.raises(IntegrityError), transaction.atomic():
        AuditEntry.objects.all().delete()

"""The audit chain's trigger, and DELETE refused on run events and checkpoints (issue 19, defect 7).

1. `harness_audit_chain`: BEFORE INSERT on harness_auditentry, it gives the entry its project's next seq,
   the previous entry's hash and its own hash = SHA-256(prev_hash || mac), taken from and written to the
   project's AuditChainHead row under that row's lock (ON CONFLICT DO UPDATE re-reads the newest version
   after waiting), so concurrent writers queue instead of forking the chain. SECURITY DEFINER: the runtime
   role, which has no privilege on the head, still chains its entries; its search_path ends with pg_temp so
   a temporary table cannot stand in for the head.
2. The entries written before this migration are chained here, per project in id order.
3. DELETE of run events is refused; DELETE of checkpoints is refused unless every deleted checkpoint is a
   LangGraph thread's (`external_id` set) or descends from one deleted in the same statement (what
   runs_app.services.threads.thread_delete removes, as LangGraph's delete_thread asks). Both give way to
   the tables' owner with `SET LOCAL harness.history_delete = 'on'`: the door a retention job (issue 20)
   uses, which the runtime role cannot open (it owns nothing; any role may set the setting).
"""

from django.db import migrations

from harness.sql_files import install, load

FUNCTIONS = ("harness_audit_chain", "harness_history_delete_allowed", "harness_refuse_history_delete",
             "harness_checkpoint_delete_check")
TRIGGERS = ("harness_auditentry_chain", "runs_app_runevent_no_delete", "runs_app_checkpoint_no_delete")


def _chain_existing(apps, cursor):
    """Chain the entries already written (the append-only trigger is off for this one UPDATE per entry)."""
    from harness.audit import GENESIS, entry_content_of, entry_mac, link_hash

    entry_model = apps.get_model("harness", "AuditEntry")
    head_model = apps.get_model("harness", "AuditChainHead")
    project_ids = sorted(set(entry_model.objects.filter(seq__isnull=True).values_list("project_id", flat=True)))
    if not project_ids:
        return
    cursor.execute("ALTER TABLE harness_auditentry DISABLE TRIGGER harness_auditentry_append_only")
    for project_id in project_ids:
        seq, prev, before = 0, GENESIS, GENESIS
        for entry in entry_model.objects.filter(project_id=project_id).order_by("id").iterator(chunk_size=2000):
            seq += 1
            mac = entry_mac(entry_content_of(project_id=project_id, actor=entry.actor, action=entry.action,
                                             target_type=entry.target_type, target_id=entry.target_id,
                                             data=entry.data, created_at=entry.created_at))
            hash_ = link_hash(prev, mac)
            cursor.execute("UPDATE harness_auditentry SET seq = %s, prev_hash = %s, hash = %s, mac = %s WHERE id = %s",
                           [seq, prev, hash_, mac, entry.pk])
            before, prev = prev, hash_
        head_model.objects.update_or_create(project_id=project_id,
                                            defaults={"seq": seq, "prev_hash": before, "hash": prev})
    cursor.execute("ALTER TABLE harness_auditentry ENABLE TRIGGER harness_auditentry_append_only")


def chain_existing(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        _chain_existing(apps, cursor)


class Migration(migrations.Migration):
    dependencies = [
        ("runs_app", "0012_task_state_versions"),
        ("harness", "0002_audit_chain"),
    ]
    # The functions, then the entries already written are chained, then the triggers (as one step did before).
    operations = [
        install(*(load("runs_app", f"{name}.v1.sql") for name in FUNCTIONS),
                reverse=["DROP FUNCTION IF EXISTS harness_audit_chain();",
                         "DROP FUNCTION IF EXISTS harness_checkpoint_delete_check();",
                         "DROP FUNCTION IF EXISTS harness_refuse_history_delete();",
                         "DROP FUNCTION IF EXISTS harness_history_delete_allowed(oid);"]),
        migrations.RunPython(chain_existing, migrations.RunPython.noop),
        install(*(load("runs_app", f"{name}.trigger.v1.sql") for name in TRIGGERS),
                reverse=["DROP TRIGGER IF EXISTS harness_auditentry_chain ON harness_auditentry;",
                         "DROP TRIGGER IF EXISTS runs_app_runevent_no_delete ON runs_app_runevent;",
                         "DROP TRIGGER IF EXISTS runs_app_checkpoint_no_delete ON runs_app_checkpoint;"]),
    ]

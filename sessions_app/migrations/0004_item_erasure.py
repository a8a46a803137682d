"""The one door through which a session item's content may change: erasure of a person (memory_app.erasure).

Session items are append-only (runs_app migration 0003 refuses every UPDATE). Erasing a person must still take
their words out of the items they authored while the row keeps its seq, role and run (a cursor, a memory
record's provenance and an approval page name items by (session, seq)). So:

1. `harness_item_rewrite_check` replaces the blanket refusal on this table. It lets an UPDATE through only
   when the transaction set `harness.item_erase` and the current user is a member of the table's owner,
   and the new row is the old one with its content replaced by exactly the tombstone of the old content
   (`{"erased": true, "sha256": <SHA-256 of the old jsonb text>, "erased_by", "erased_at"}`); anything else
   is refused as before, whatever the role.
2. `harness_session_items_erase(ids, by)` is SECURITY DEFINER (it runs as the owner), sets the setting for
   its own statement and tombstones the given items. Nobody but the owner may execute it until
   `manage.py runtime_role` grants it to the runtime role. The runtime role, which owns nothing, can call it but
   cannot open the door itself (it is no member of the owner): all it can do through it is replace an
   item's content by that content's hash, which is less than the DELETE it already holds (pop, trim).
"""

from django.db import migrations

from harness.sql_files import install, load

FUNCTIONS = ("harness_item_tombstone", "harness_item_rewrite_check", "harness_session_items_erase")
APPEND_ONLY = "DROP TRIGGER IF EXISTS sessions_app_sessionitem_append_only ON sessions_app_sessionitem;"


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0003_session_context_budget"),
        ("runs_app", "0013_audit_chain_and_history_deletes"),
    ]
    operations = [
        install(
            *(load("sessions_app", f"{name}.v1.sql") for name in FUNCTIONS),
            APPEND_ONLY,
            load("sessions_app", "sessions_app_sessionitem_append_only.trigger.v2.sql"),
            "REVOKE ALL ON FUNCTION harness_session_items_erase(bigint[], text) FROM PUBLIC;",
            reverse=[
                APPEND_ONLY,
                load("sessions_app", "sessions_app_sessionitem_append_only.trigger.v1.sql"),
                "DROP FUNCTION IF EXISTS harness_session_items_erase(bigint[], text);",
                "DROP FUNCTION IF EXISTS harness_item_rewrite_check();",
                "DROP FUNCTION IF EXISTS harness_item_tombstone(jsonb, text, timestamptz);",
            ],
        ),
    ]

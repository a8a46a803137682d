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

FUNCTIONS = """
CREATE OR REPLACE FUNCTION harness_item_tombstone(old jsonb, by text, at timestamptz) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object('erased', true, 'sha256', encode(sha256(convert_to(old::text, 'UTF8')), 'hex'),
                              'erased_by', by, 'erased_at', at)
$$;

CREATE OR REPLACE FUNCTION harness_item_rewrite_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE'
       AND coalesce(current_setting('harness.item_erase', true), '') = 'on'
       AND pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'MEMBER')
       AND NEW.id = OLD.id AND NEW.session_id = OLD.session_id AND NEW.seq = OLD.seq AND NEW.role = OLD.role
       AND NEW.run_id IS NOT DISTINCT FROM OLD.run_id AND NEW.created_at = OLD.created_at
       AND jsonb_typeof(NEW.content) = 'object'
       AND NEW.content = harness_item_tombstone(OLD.content, NEW.content->>'erased_by',
                                                (NEW.content->>'erased_at')::timestamptz) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'append-only table %: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE OR REPLACE FUNCTION harness_session_items_erase(item_ids bigint[], by text)
RETURNS TABLE (item_id bigint, sha256 text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp AS $$
BEGIN
    PERFORM set_config('harness.item_erase', 'on', true);
    RETURN QUERY
        UPDATE sessions_app_sessionitem AS i
           SET content = harness_item_tombstone(i.content, by, statement_timestamp())
         WHERE i.id = ANY(item_ids)
           AND NOT (jsonb_typeof(i.content) = 'object' AND i.content @> '{"erased": true}' AND i.content ? 'sha256')
        RETURNING i.id::bigint, i.content->>'sha256';
    PERFORM set_config('harness.item_erase', '', true);
END;
$$;
"""

FORWARDS = """
DROP TRIGGER IF EXISTS sessions_app_sessionitem_append_only ON sessions_app_sessionitem;
CREATE TRIGGER sessions_app_sessionitem_append_only BEFORE UPDATE ON sessions_app_sessionitem
    FOR EACH ROW EXECUTE FUNCTION harness_item_rewrite_check();
REVOKE ALL ON FUNCTION harness_session_items_erase(bigint[], text) FROM PUBLIC;
"""

BACKWARDS = """
DROP TRIGGER IF EXISTS sessions_app_sessionitem_append_only ON sessions_app_sessionitem;
CREATE TRIGGER sessions_app_sessionitem_append_only BEFORE UPDATE ON sessions_app_sessionitem
    FOR EACH ROW EXECUTE FUNCTION harness_refuse_rewrite();
DROP FUNCTION IF EXISTS harness_session_items_erase(bigint[], text);
DROP FUNCTION IF EXISTS harness_item_rewrite_check();
DROP FUNCTION IF EXISTS harness_item_tombstone(jsonb, text, timestamptz);
"""


def forwards(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:  # raw: the bodies' '%' are not placeholders
        cursor.execute("SELECT quote_ident(current_schema())")
        (schema,) = cursor.fetchone()
        cursor.execute(FUNCTIONS.replace("{schema}", schema))
        cursor.execute(FORWARDS)


def backwards(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(BACKWARDS)


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0003_session_context_budget"),
        ("runs_app", "0013_audit_chain_and_history_deletes"),
    ]
    operations = [migrations.RunPython(forwards, backwards)]

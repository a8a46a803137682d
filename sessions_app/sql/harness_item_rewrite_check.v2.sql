CREATE OR REPLACE FUNCTION harness_item_rewrite_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE'
       AND coalesce(current_setting('harness.item_erase', true), '') = 'on'
       AND pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'MEMBER')
       AND NEW.id = OLD.id AND NEW.session_id = OLD.session_id AND NEW.seq = OLD.seq AND NEW.role = OLD.role
       AND NEW.run_id IS NOT DISTINCT FROM OLD.run_id AND NEW.created_at = OLD.created_at
       AND json_typeof(NEW.content) = 'object'
       AND NEW.content::jsonb = harness_item_tombstone(OLD.content, NEW.content->>'erased_by',
                                                       (NEW.content->>'erased_at')::timestamptz)::jsonb THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'append-only table %: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

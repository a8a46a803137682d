CREATE OR REPLACE FUNCTION harness_refuse_history_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF harness_history_delete_allowed(TG_RELID) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'append-only table %: DELETE refused', TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

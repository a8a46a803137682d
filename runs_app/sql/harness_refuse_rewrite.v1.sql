CREATE OR REPLACE FUNCTION harness_refuse_rewrite() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'append-only table %: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;

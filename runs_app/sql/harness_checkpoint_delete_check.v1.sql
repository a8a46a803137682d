CREATE OR REPLACE FUNCTION harness_checkpoint_delete_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    stray bigint;
BEGIN
    IF harness_history_delete_allowed(TG_RELID) THEN
        RETURN NULL;
    END IF;
    WITH RECURSIVE thread(id) AS (
        SELECT id FROM gone WHERE external_id <> ''
        UNION
        SELECT g.id FROM gone g JOIN thread t ON g.parent_id = t.id
    )
    SELECT g.id INTO stray FROM gone g WHERE g.id NOT IN (SELECT id FROM thread) LIMIT 1;
    IF stray IS NOT NULL THEN
        RAISE EXCEPTION 'append-only table %: DELETE of checkpoint % refused (only a LangGraph thread''s '
                        'checkpoints and those descended from them are deleted)', TG_TABLE_NAME, stray
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END;
$$;

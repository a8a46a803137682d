CREATE OR REPLACE FUNCTION harness_session_items_erase(item_ids bigint[], by text)
RETURNS TABLE (item_id bigint, sha256 text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp AS $$
BEGIN
    PERFORM set_config('harness.item_erase', 'on', true);
    RETURN QUERY
        UPDATE sessions_app_sessionitem AS i
           SET content = harness_item_tombstone(i.content, by, statement_timestamp())
         WHERE i.id = ANY(item_ids)
           AND NOT (json_typeof(i.content) = 'object' AND i.content::jsonb @> '{"erased": true}'
                    AND i.content::jsonb ? 'sha256')
        RETURNING i.id::bigint, i.content->>'sha256';
    PERFORM set_config('harness.item_erase', '', true);
END;
$$;

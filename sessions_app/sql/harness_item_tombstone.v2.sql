CREATE OR REPLACE FUNCTION harness_item_tombstone(old json, by text, at timestamptz) RETURNS json
LANGUAGE sql IMMUTABLE AS $$
    SELECT json_build_object('erased', true, 'sha256', encode(sha256(convert_to(old::jsonb::text, 'UTF8')), 'hex'),
                             'erased_by', by, 'erased_at', at)
$$;

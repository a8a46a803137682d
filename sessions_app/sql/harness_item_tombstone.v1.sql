CREATE OR REPLACE FUNCTION harness_item_tombstone(old jsonb, by text, at timestamptz) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object('erased', true, 'sha256', encode(sha256(convert_to(old::text, 'UTF8')), 'hex'),
                              'erased_by', by, 'erased_at', at)
$$;

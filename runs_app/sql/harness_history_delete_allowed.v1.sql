CREATE OR REPLACE FUNCTION harness_history_delete_allowed(rel oid) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(current_setting('harness.history_delete', true), '') = 'on'
       AND pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = rel), 'MEMBER')
$$;

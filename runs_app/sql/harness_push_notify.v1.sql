CREATE OR REPLACE FUNCTION harness_push_notify() RETURNS trigger LANGUAGE plpgsql AS $$
-- One NOTIFY on the `harness_push` channel per approval created or decided and per run whose status changed, sent
-- by the statement's own transaction: PostgreSQL delivers it only when that transaction commits (never for a
-- rollback), after the change is visible. The payload is ids and the new status only: `kind project id status`;
-- a listener re-reads the row through the API, so nothing in it needs to be secret or complete.
BEGIN
    PERFORM pg_notify('harness_push', TG_ARGV[0] || ' ' || NEW.project_id || ' ' || NEW.id || ' ' || NEW.status);
    RETURN NULL;
END;
$$;

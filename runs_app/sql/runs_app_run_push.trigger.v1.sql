CREATE TRIGGER runs_app_run_push AFTER UPDATE OF status ON runs_app_run
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION harness_push_notify('run');

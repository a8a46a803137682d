CREATE TRIGGER notify_app_run_status AFTER UPDATE OF status ON runs_app_run
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION notify_app_run_status_changed();

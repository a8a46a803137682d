CREATE TRIGGER runs_app_run_no_delete BEFORE DELETE ON runs_app_run
    FOR EACH ROW EXECUTE FUNCTION harness_refuse_history_delete();

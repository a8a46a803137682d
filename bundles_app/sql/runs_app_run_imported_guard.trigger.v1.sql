CREATE TRIGGER runs_app_run_imported_guard BEFORE INSERT OR UPDATE ON runs_app_run
    FOR EACH ROW EXECUTE FUNCTION harness_imported_guard();

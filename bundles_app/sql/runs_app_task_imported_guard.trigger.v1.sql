CREATE TRIGGER runs_app_task_imported_guard BEFORE UPDATE ON runs_app_task
    FOR EACH ROW EXECUTE FUNCTION harness_imported_guard();

CREATE TRIGGER runs_app_task_state_history AFTER INSERT OR UPDATE ON runs_app_task
    FOR EACH ROW EXECUTE FUNCTION runs_app_task_record_state();

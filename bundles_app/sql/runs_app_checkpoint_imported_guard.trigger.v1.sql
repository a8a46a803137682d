CREATE TRIGGER runs_app_checkpoint_imported_guard BEFORE INSERT ON runs_app_checkpoint
    FOR EACH ROW EXECUTE FUNCTION harness_imported_guard();

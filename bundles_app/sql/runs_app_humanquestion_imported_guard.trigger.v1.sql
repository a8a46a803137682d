CREATE TRIGGER runs_app_humanquestion_imported_guard BEFORE INSERT OR UPDATE ON runs_app_humanquestion
    FOR EACH ROW EXECUTE FUNCTION harness_imported_guard();

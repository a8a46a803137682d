CREATE TRIGGER runs_app_handoff_imported_guard BEFORE INSERT OR UPDATE ON runs_app_handoff
    FOR EACH ROW EXECUTE FUNCTION harness_imported_guard();

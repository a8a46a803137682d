CREATE TRIGGER runs_app_nodeexecution_imported_guard BEFORE INSERT OR UPDATE ON runs_app_nodeexecution
    FOR EACH ROW EXECUTE FUNCTION harness_imported_guard();

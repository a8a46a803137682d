CREATE TRIGGER runs_app_approvalrequest_imported_guard BEFORE INSERT OR UPDATE ON runs_app_approvalrequest
    FOR EACH ROW EXECUTE FUNCTION harness_imported_guard();

CREATE TRIGGER runs_app_externaleffect_imported_guard BEFORE INSERT OR UPDATE ON runs_app_externaleffect
    FOR EACH ROW EXECUTE FUNCTION harness_imported_guard();

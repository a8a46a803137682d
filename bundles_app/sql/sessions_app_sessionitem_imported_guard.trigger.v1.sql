CREATE TRIGGER sessions_app_sessionitem_imported_guard BEFORE INSERT ON sessions_app_sessionitem
    FOR EACH ROW EXECUTE FUNCTION harness_imported_guard();

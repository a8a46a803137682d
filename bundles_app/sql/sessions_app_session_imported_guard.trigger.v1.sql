CREATE TRIGGER sessions_app_session_imported_guard BEFORE UPDATE ON sessions_app_session
    FOR EACH ROW EXECUTE FUNCTION harness_imported_guard();

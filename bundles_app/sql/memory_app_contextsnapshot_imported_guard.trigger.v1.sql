CREATE TRIGGER memory_app_contextsnapshot_imported_guard BEFORE INSERT ON memory_app_contextsnapshot
    FOR EACH ROW EXECUTE FUNCTION harness_imported_guard();

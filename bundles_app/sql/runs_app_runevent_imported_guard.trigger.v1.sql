CREATE TRIGGER runs_app_runevent_imported_guard BEFORE INSERT ON runs_app_runevent
    FOR EACH ROW EXECUTE FUNCTION harness_imported_guard();

CREATE TRIGGER runs_app_runevent_no_delete BEFORE DELETE ON runs_app_runevent
    FOR EACH ROW EXECUTE FUNCTION harness_refuse_history_delete();

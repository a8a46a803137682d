CREATE TRIGGER runs_app_runevent_append_only BEFORE UPDATE ON runs_app_runevent FOR EACH ROW EXECUTE FUNCTION harness_refuse_rewrite();

CREATE TRIGGER runs_app_taskstateversion_append_only BEFORE UPDATE ON runs_app_taskstateversion
    FOR EACH ROW EXECUTE FUNCTION harness_refuse_rewrite();

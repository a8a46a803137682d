CREATE TRIGGER runs_app_checkpoint_append_only BEFORE UPDATE ON runs_app_checkpoint FOR EACH ROW EXECUTE FUNCTION harness_refuse_rewrite();

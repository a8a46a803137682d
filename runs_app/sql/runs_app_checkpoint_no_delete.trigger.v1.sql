CREATE TRIGGER runs_app_checkpoint_no_delete AFTER DELETE ON runs_app_checkpoint
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION harness_checkpoint_delete_check();

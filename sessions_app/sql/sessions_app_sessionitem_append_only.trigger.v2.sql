CREATE TRIGGER sessions_app_sessionitem_append_only BEFORE UPDATE ON sessions_app_sessionitem
    FOR EACH ROW EXECUTE FUNCTION harness_item_rewrite_check();

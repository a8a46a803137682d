CREATE TRIGGER harness_auditentry_append_only BEFORE UPDATE OR DELETE ON harness_auditentry FOR EACH ROW EXECUTE FUNCTION harness_refuse_rewrite();

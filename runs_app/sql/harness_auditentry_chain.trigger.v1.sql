CREATE TRIGGER harness_auditentry_chain BEFORE INSERT ON harness_auditentry
    FOR EACH ROW EXECUTE FUNCTION harness_audit_chain();

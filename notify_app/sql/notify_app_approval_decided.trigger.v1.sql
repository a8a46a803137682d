CREATE TRIGGER notify_app_approval_decided AFTER UPDATE OF status ON runs_app_approvalrequest
    FOR EACH ROW WHEN (OLD.status = 'pending' AND NEW.status <> 'pending')
    EXECUTE FUNCTION notify_app_approval_decided();

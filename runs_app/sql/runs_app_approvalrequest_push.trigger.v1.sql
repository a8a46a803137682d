CREATE TRIGGER runs_app_approvalrequest_push AFTER INSERT OR UPDATE OF status ON runs_app_approvalrequest
    FOR EACH ROW EXECUTE FUNCTION harness_push_notify('approval');

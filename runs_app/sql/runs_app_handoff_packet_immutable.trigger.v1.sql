CREATE TRIGGER runs_app_handoff_packet_immutable BEFORE UPDATE ON runs_app_handoff
    FOR EACH ROW EXECUTE FUNCTION harness_handoff_packet_immutable();

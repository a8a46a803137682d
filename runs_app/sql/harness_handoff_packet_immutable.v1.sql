CREATE OR REPLACE FUNCTION harness_handoff_packet_immutable() RETURNS trigger AS $$
BEGIN
    IF NEW.packet IS DISTINCT FROM OLD.packet OR NEW.packet_fingerprint IS DISTINCT FROM OLD.packet_fingerprint
       OR NEW.origin_run_id IS DISTINCT FROM OLD.origin_run_id
       OR NEW.receiver_session_id IS DISTINCT FROM OLD.receiver_session_id
       OR NEW.deadline IS DISTINCT FROM OLD.deadline THEN
        RAISE EXCEPTION 'handoff %: the packet is immutable once issued', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION harness_audit_chain() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp AS $$
BEGIN
    INSERT INTO harness_auditchainhead AS h (project_id, seq, prev_hash, hash)
    VALUES (NEW.project_id, 1, repeat('0', 64),
            encode(sha256(decode(repeat('0', 64), 'hex') || decode(NEW.mac, 'hex')), 'hex'))
    ON CONFLICT (project_id) DO UPDATE
       SET seq = h.seq + 1, prev_hash = h.hash,
           hash = encode(sha256(decode(h.hash, 'hex') || decode(NEW.mac, 'hex')), 'hex')
    RETURNING h.seq, h.prev_hash, h.hash INTO NEW.seq, NEW.prev_hash, NEW.hash;
    RETURN NEW;
END;
$$;

-- The lease of the replica running a job (see the Postgres twin): who, until when, and whether a
-- client asked it to stop (a cancel that reached another replica).
ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
ALTER TABLE jobs ADD COLUMN lease_until REAL;
ALTER TABLE jobs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_claim ON jobs (state, created_at);

-- The lease of the worker running a job (see the Postgres twin): who, and until when.
ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
ALTER TABLE jobs ADD COLUMN lease_until REAL;
CREATE INDEX jobs_claim ON jobs (state, created_at);

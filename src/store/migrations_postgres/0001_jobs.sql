-- Jobs (training and long solves) and their evaluation curves: the Postgres twin of
-- ../migrations (same columns; DOUBLE PRECISION and BIGINT where SQLite has REAL and INTEGER),
-- with the lease of the replica running a job.
CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,              -- 'training' | 'solve'
    state TEXT NOT NULL,             -- queued | running | succeeded | failed | cancelled | interrupted
    request TEXT NOT NULL,           -- the accepted request, JSON
    created_at DOUBLE PRECISION NOT NULL,
    started_at DOUBLE PRECISION,
    finished_at DOUBLE PRECISION,
    steps BIGINT NOT NULL DEFAULT 0,
    latest TEXT,
    result TEXT,
    error TEXT,
    restarts BIGINT NOT NULL DEFAULT 0,
    lease_owner TEXT,                -- the replica running it
    lease_until DOUBLE PRECISION,    -- unix seconds; past it, another replica may claim the job
    cancel_requested BIGINT NOT NULL DEFAULT 0  -- 1: a client cancelled it through any replica
);
CREATE INDEX jobs_state ON jobs (kind, state);
CREATE INDEX jobs_claim ON jobs (state, created_at);

CREATE TABLE job_metrics (
    job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (job_id, seq)
);

-- Jobs (training and long solves), their evaluation curve and their event log.
CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,              -- 'training' | 'solve'
    state TEXT NOT NULL,             -- queued | running | succeeded | failed | cancelled | interrupted
    request TEXT NOT NULL,           -- the accepted request, JSON
    created_at REAL NOT NULL,        -- unix seconds
    started_at REAL,
    finished_at REAL,
    steps INTEGER NOT NULL DEFAULT 0,
    latest TEXT,                     -- latest evaluation (training) or incumbent (solve), JSON
    result TEXT,                     -- final outcome, JSON
    error TEXT,
    restarts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_state ON jobs (kind, state);

CREATE TABLE job_metrics (
    job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    value TEXT NOT NULL,             -- one evaluation, JSON
    PRIMARY KEY (job_id, seq)
);

-- Tenancy: the API key (its name) that submitted a job; NULL when keys are not configured.
ALTER TABLE jobs ADD COLUMN owner TEXT;
-- The population a member-training or evaluation job belongs to.
ALTER TABLE jobs ADD COLUMN population_id TEXT;
CREATE INDEX jobs_population ON jobs (population_id);

-- Population training (PBT, tournament): the request and how many member rounds it has
-- scheduled and seen evaluated out of its budget.
CREATE TABLE populations (
    id TEXT PRIMARY KEY,
    request TEXT NOT NULL,           -- the accepted request, JSON
    state TEXT NOT NULL,             -- running | succeeded | cancelled | failed
    owner TEXT,
    created_at REAL NOT NULL,
    finished_at REAL,
    rounds_total INTEGER NOT NULL,
    rounds_scheduled INTEGER NOT NULL,
    rounds_done INTEGER NOT NULL DEFAULT 0,
    error TEXT
);

-- The leaderboard: every evaluated checkpoint of a member's round (immutable once written).
CREATE TABLE population_entries (
    population_id TEXT NOT NULL REFERENCES populations (id) ON DELETE CASCADE,
    member INTEGER NOT NULL,
    round INTEGER NOT NULL,
    steps INTEGER NOT NULL,          -- env steps in the checkpoint's lineage
    score REAL NOT NULL,             -- the evaluator's mean return on fresh seeds
    score_std REAL NOT NULL,
    hyperparameters TEXT NOT NULL,   -- JSON
    origin TEXT NOT NULL,            -- JSON: how the round started (start, continue, exploit, generate)
    checkpoint TEXT NOT NULL,        -- its folder, relative to the data folder
    evaluated_at REAL NOT NULL,
    PRIMARY KEY (population_id, member, round)
);

-- The Postgres twin of ../migrations/0003_populations.sql.
ALTER TABLE jobs ADD COLUMN owner TEXT;
ALTER TABLE jobs ADD COLUMN population_id TEXT;
CREATE INDEX jobs_population ON jobs (population_id);

CREATE TABLE populations (
    id TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    state TEXT NOT NULL,
    owner TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    finished_at DOUBLE PRECISION,
    rounds_total BIGINT NOT NULL,
    rounds_scheduled BIGINT NOT NULL,
    rounds_done BIGINT NOT NULL DEFAULT 0,
    error TEXT
);

CREATE TABLE population_entries (
    population_id TEXT NOT NULL REFERENCES populations (id) ON DELETE CASCADE,
    member BIGINT NOT NULL,
    round BIGINT NOT NULL,
    steps BIGINT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    score_std DOUBLE PRECISION NOT NULL,
    hyperparameters TEXT NOT NULL,
    origin TEXT NOT NULL,
    checkpoint TEXT NOT NULL,
    evaluated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (population_id, member, round)
);

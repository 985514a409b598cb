//! Populations in the store: the population row, its leaderboard (one entry per evaluated
//! member round) and the member and evaluation jobs it queues. `record_round` is the
//! orchestrator's step: one transaction that files an evaluated round and queues the member's
//! next one, so that a round is decided exactly once however many replicas evaluate.

use super::{now, numbered, JobState, Pool, Store};
use anyhow::{Context, Result};
use serde::Serialize;
use sqlx::{ColumnIndex, Decode, Row, Type};
use utoipa::ToSchema;

/// One population row.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PopulationRecord {
    pub id: String,
    /// running, succeeded, cancelled or failed.
    pub state: String,
    /// The accepted request.
    #[schema(value_type = Object)]
    pub request: serde_json::Value,
    pub owner: Option<String>,
    pub created_at: f64,
    pub finished_at: Option<f64>,
    /// Member rounds in the budget (total steps / interval steps).
    pub rounds_total: i64,
    /// Rounds queued so far (the first `size` at submission, then one per evaluated round).
    pub rounds_scheduled: i64,
    /// Rounds evaluated.
    pub rounds_done: i64,
    pub error: Option<String>,
}

/// One evaluated checkpoint of a member's round.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Entry {
    pub member: i64,
    pub round: i64,
    /// Env steps in the checkpoint's lineage.
    pub steps: i64,
    /// The evaluator's mean return over fresh seeds.
    pub score: f64,
    pub score_std: f64,
    #[schema(value_type = Object)]
    pub hyperparameters: serde_json::Value,
    /// How the round started: `{"action": "start" | "continue" | "exploit" | "generate", "from":
    /// {"member", "round"}, "ancestor": member}`.
    #[schema(value_type = Object)]
    pub origin: serde_json::Value,
    /// Its folder, relative to the data folder.
    pub checkpoint: String,
    pub evaluated_at: f64,
}

/// A job to queue: id, kind, request.
pub struct NewJob {
    pub id: String,
    pub kind: &'static str,
    pub request: serde_json::Value,
}

fn json_column(text: String) -> serde_json::Value {
    serde_json::from_str(&text).unwrap_or_default()
}

fn population<R>(row: &R) -> Result<PopulationRecord>
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> f64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok(PopulationRecord {
        id: row.try_get("id")?,
        state: row.try_get("state")?,
        request: json_column(row.try_get("request")?),
        owner: row.try_get("owner")?,
        created_at: row.try_get("created_at")?,
        finished_at: row.try_get("finished_at")?,
        rounds_total: row.try_get("rounds_total")?,
        rounds_scheduled: row.try_get("rounds_scheduled")?,
        rounds_done: row.try_get("rounds_done")?,
        error: row.try_get("error")?,
    })
}

fn entry<R>(row: &R) -> Result<Entry>
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> f64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok(Entry {
        member: row.try_get("member")?,
        round: row.try_get("round")?,
        steps: row.try_get("steps")?,
        score: row.try_get("score")?,
        score_std: row.try_get("score_std")?,
        hyperparameters: json_column(row.try_get("hyperparameters")?),
        origin: json_column(row.try_get("origin")?),
        checkpoint: row.try_get("checkpoint")?,
        evaluated_at: row.try_get("evaluated_at")?,
    })
}

const INSERT_JOB: &str = "INSERT INTO jobs (id, kind, state, request, created_at, owner, population_id) \
     VALUES (?, ?, 'queued', ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING";

/// Runs `$body` in a transaction that first takes the population's row lock (a write on both
/// databases: Postgres locks the row, SQLite takes its one write lock), so that the steps of one
/// population run one at a time over every replica.
macro_rules! locked {
    ($store:expr, $id:expr, |$tx:ident, $sql:ident| $body:block) => {
        transaction!($store, |$tx, $sql| {
            let lock = "UPDATE populations SET rounds_done = rounds_done WHERE id = ?";
            sqlx::query(&$sql(lock)).bind($id).execute(&mut *$tx).await?;
            $body
        })
    };
}

impl Store {
    /// Files a population and queues its first jobs, in one transaction.
    pub async fn insert_population(
        &self,
        id: &str,
        request: &serde_json::Value,
        owner: Option<&str>,
        rounds_total: i64,
        first: &[NewJob],
    ) -> Result<()> {
        const INSERT: &str =
            "INSERT INTO populations (id, request, state, owner, created_at, rounds_total, rounds_scheduled) \
             VALUES (?, ?, 'running', ?, ?, ?, ?)";
        let (text, at, scheduled) = (request.to_string(), now(), first.len() as i64);
        transaction!(self, |tx, sql| {
            sqlx::query(&sql(INSERT))
                .bind(id)
                .bind(&text)
                .bind(owner)
                .bind(at)
                .bind(rounds_total)
                .bind(scheduled)
                .execute(&mut *tx)
                .await?;
            for job in first {
                sqlx::query(&sql(INSERT_JOB))
                    .bind(&job.id)
                    .bind(job.kind)
                    .bind(job.request.to_string())
                    .bind(at)
                    .bind(owner)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
        });
        Ok(())
    }

    pub async fn population(&self, id: &str) -> Result<Option<PopulationRecord>> {
        Ok(statement!(self, optional(population), "SELECT * FROM populations WHERE id = ?", id))
    }

    /// Populations, newest first, of one owner when given.
    pub async fn populations(&self, owner: Option<&str>, limit: i64) -> Result<Vec<PopulationRecord>> {
        Ok(statement!(
            self,
            all(population),
            "SELECT * FROM populations WHERE (? IS NULL OR owner = ?) ORDER BY created_at DESC LIMIT ?",
            owner,
            owner,
            limit
        ))
    }

    /// The leaderboard: every evaluated round, best score first.
    pub async fn entries(&self, id: &str) -> Result<Vec<Entry>> {
        Ok(statement!(
            self,
            all(entry),
            "SELECT * FROM population_entries WHERE population_id = ? ORDER BY score DESC, member, round",
            id
        ))
    }

    /// Queues a population's job unless a job of that id exists (a retried step queues once).
    pub async fn insert_job_once(&self, population: &PopulationRecord, job: &NewJob) -> Result<bool> {
        let n = statement!(
            self,
            execute,
            INSERT_JOB,
            &job.id,
            job.kind,
            job.request.to_string(),
            now(),
            &population.owner,
            &population.id
        );
        Ok(n == 1)
    }

    /// The orchestrator's step for one evaluated round: files `filed` (unless it already is:
    /// then nothing happens) and, while the population runs, queues the job `next` decides
    /// from the population and the leaderboard (the new entry included; None: the member's
    /// budget is spent);
    /// the population ends `succeeded` with its last round. One transaction under the
    /// population's row lock.
    pub async fn record_round(
        &self,
        id: &str,
        filed: &Entry,
        next: impl FnOnce(&PopulationRecord, &[Entry]) -> Result<Option<NewJob>>,
    ) -> Result<()> {
        const FILE: &str = "INSERT INTO population_entries \
             (population_id, member, round, steps, score, score_std, hyperparameters, origin, checkpoint, evaluated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (population_id, member, round) DO NOTHING";
        const DONE: &str = "UPDATE populations SET rounds_done = rounds_done + 1 WHERE id = ?";
        const SCHEDULED: &str = "UPDATE populations SET rounds_scheduled = rounds_scheduled + 1 WHERE id = ?";
        const END: &str = "UPDATE populations SET state = 'succeeded', finished_at = ? \
             WHERE id = ? AND state = 'running' AND rounds_done >= rounds_total";
        const POPULATION: &str = "SELECT * FROM populations WHERE id = ?";
        const ENTRIES: &str =
            "SELECT * FROM population_entries WHERE population_id = ? ORDER BY score DESC, member, round";
        let e = filed;
        locked!(self, id, |tx, sql| {
            let filed_now = sqlx::query(&sql(FILE))
                .bind(id)
                .bind(e.member)
                .bind(e.round)
                .bind(e.steps)
                .bind(e.score)
                .bind(e.score_std)
                .bind(e.hyperparameters.to_string())
                .bind(e.origin.to_string())
                .bind(&e.checkpoint)
                .bind(e.evaluated_at)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if filed_now == 1 {
                sqlx::query(&sql(DONE)).bind(id).execute(&mut *tx).await?;
                let row = sqlx::query(&sql(POPULATION)).bind(id).fetch_one(&mut *tx).await?;
                let record = population(&row)?;
                let rows = sqlx::query(&sql(ENTRIES)).bind(id).fetch_all(&mut *tx).await?;
                let board = rows.iter().map(entry).collect::<Result<Vec<_>>>()?;
                let job = if record.state == "running" { next(&record, &board)? } else { None };
                if let Some(job) = job {
                    sqlx::query(&sql(INSERT_JOB))
                        .bind(&job.id)
                        .bind(job.kind)
                        .bind(job.request.to_string())
                        .bind(now())
                        .bind(&record.owner)
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                    sqlx::query(&sql(SCHEDULED)).bind(id).execute(&mut *tx).await?;
                }
                sqlx::query(&sql(END)).bind(now()).bind(id).execute(&mut *tx).await?;
            }
        });
        Ok(())
    }

    /// Ends a running population as `state` (cancelled or failed): its waiting jobs are
    /// cancelled and its running ones asked to stop. False when it had already ended.
    pub async fn end_population(&self, id: &str, state: JobState, error: Option<&str>) -> Result<bool> {
        let ended = statement!(
            self,
            execute,
            "UPDATE populations SET state = ?, finished_at = ?, error = ? WHERE id = ? AND state = 'running'",
            state.as_str(),
            now(),
            error,
            id
        );
        statement!(
            self,
            execute,
            "UPDATE jobs SET state = 'cancelled', finished_at = ? WHERE population_id = ? AND state IN ('queued', 'interrupted')",
            now(),
            id
        );
        statement!(
            self,
            execute,
            "UPDATE jobs SET cancel_requested = 1 WHERE population_id = ? AND state = 'running'",
            id
        );
        Ok(ended == 1)
    }

    /// Jobs of a population (member rounds and evaluations), oldest first.
    pub async fn population_jobs(&self, id: &str) -> Result<Vec<super::JobRecord>> {
        Ok(statement!(
            self,
            all(super::record),
            "SELECT * FROM jobs WHERE population_id = ? ORDER BY created_at, id",
            id
        ))
    }
}

/// Checks that a folder name from the store stays inside the data folder.
pub fn relative_folder(name: &str) -> Result<&str> {
    let ok = !name.is_empty()
        && !name.starts_with('/')
        && name.split('/').all(|part| !part.is_empty() && part != "." && part != "..");
    ok.then_some(name).with_context(|| format!("'{name}' is not a folder inside the data folder"))
}

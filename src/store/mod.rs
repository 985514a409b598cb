//! The durable store: jobs and their evaluation curves, in SQLite (the embedded default) or in
//! PostgreSQL (several replicas on one database), both through sqlx with the same
//! methods. Each has its migrations (`migrations/`, `migrations_postgres/`), run at open (sqlx
//! takes an advisory lock on Postgres, so replicas starting together migrate once). Timestamps
//! are unix seconds.
//!
//! Leases: `claim` hands the oldest claimable job (queued, interrupted, or running under a lease
//! that has expired) to one owner with a lease, `FOR UPDATE SKIP LOCKED` on Postgres so that
//! concurrent claimers never take the same row nor wait for each other; the owner renews the
//! lease while it works, and `finish_claimed` ends the job only while the owner still holds it,
//! so a job taken over after its lease lapsed ends exactly once.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ColumnIndex, Decode, Row, Type};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;
use utoipa::ToSchema;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
    /// Was running when the server stopped; re-queued (resuming from its checkpoint) at start.
    Interrupted,
}

impl JobState {
    pub const ALL: [JobState; 6] = [
        JobState::Queued,
        JobState::Running,
        JobState::Succeeded,
        JobState::Failed,
        JobState::Cancelled,
        JobState::Interrupted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
            JobState::Interrupted => "interrupted",
        }
    }

    pub fn parse(text: &str) -> Option<JobState> {
        JobState::ALL.into_iter().find(|s| s.as_str() == text)
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, JobState::Succeeded | JobState::Failed | JobState::Cancelled)
    }
}

/// One job row.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct JobRecord {
    pub id: String,
    /// `training` or `solve`.
    pub kind: String,
    pub state: JobState,
    /// The accepted request.
    #[schema(value_type = Object)]
    pub request: serde_json::Value,
    pub created_at: f64,
    pub started_at: Option<f64>,
    pub finished_at: Option<f64>,
    /// Env steps done (training) or search rounds (solve).
    pub steps: i64,
    /// The latest evaluation (training) or incumbent (solve).
    #[schema(value_type = Option<Object>)]
    pub latest: Option<serde_json::Value>,
    /// The final outcome.
    #[schema(value_type = Option<Object>)]
    pub result: Option<serde_json::Value>,
    pub error: Option<String>,
    /// How often a server restart re-queued it, or another replica took it over.
    pub restarts: i64,
    /// The replica running it (its lease holder), while it runs under a lease.
    pub runner: Option<String>,
    /// The API key (by name) that submitted it; None when keys are not configured.
    pub owner: Option<String>,
    /// The population it trains or evaluates a member of (kinds `member` and `evaluation`).
    pub population_id: Option<String>,
}

/// The job kinds a replica claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Kinds {
    #[default]
    Any,
    Only(&'static str),
    Except(&'static str),
}

/// What renewing a lease found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lease {
    /// Still the owner's; `cancel_requested` when a client cancelled the job through any replica.
    Held { cancel_requested: bool },
    /// Lapsed and claimed by another owner, or the job ended.
    Lost,
}

pub fn now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

#[derive(Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

#[derive(Clone)]
pub struct Store {
    pool: Pool,
}

fn parse_json(text: Option<String>) -> Option<serde_json::Value> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

/// A job row of either database.
fn record<R>(row: &R) -> Result<JobRecord>
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> f64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    let state: String = row.try_get("state")?;
    Ok(JobRecord {
        id: row.try_get("id")?,
        kind: row.try_get("kind")?,
        state: JobState::parse(&state).with_context(|| format!("unknown job state '{state}'"))?,
        request: parse_json(row.try_get("request")?).unwrap_or_default(),
        created_at: row.try_get("created_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        steps: row.try_get("steps")?,
        latest: parse_json(row.try_get("latest")?),
        result: parse_json(row.try_get("result")?),
        error: row.try_get("error")?,
        restarts: row.try_get("restarts")?,
        runner: row.try_get("lease_owner")?,
        owner: row.try_get("owner")?,
        population_id: row.try_get("population_id")?,
    })
}

/// A `cancel_requested` row of either database.
fn cancel_flag<R>(row: &R) -> Result<bool>
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok(row.try_get::<i64, _>("cancel_requested")? != 0)
}

/// A count row (`n`) of either database.
fn count<R>(row: &R) -> Result<i64>
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok(row.try_get("n")?)
}

/// A (kind, state, count) row of either database.
fn state_count<R>(row: &R) -> Result<(String, String, i64)>
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok((row.try_get("kind")?, row.try_get("state")?, row.try_get("n")?))
}

/// A metric row of either database.
fn metric_value<R>(row: &R) -> Result<serde_json::Value>
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok(serde_json::from_str(&row.try_get::<String, _>("value")?)?)
}

/// SQLite's `?` placeholders as Postgres's `$1, $2, ...` (no statement here has a `?` in a literal).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs one statement with its bound arguments on whichever database: `execute` (rows
/// affected), `all` (every row through a decoder) or `optional` (at most one row).
macro_rules! statement {
    ($store:expr, execute, $sql:expr $(, $arg:expr)*) => {
        match &$store.pool {
            Pool::Sqlite(pool) => sqlx::query($sql)$(.bind($arg))*.execute(pool).await?.rows_affected(),
            Pool::Postgres(pool) => sqlx::query(&numbered($sql))$(.bind($arg))*.execute(pool).await?.rows_affected(),
        }
    };
    ($store:expr, all($decode:expr), $sql:expr $(, $arg:expr)*) => {
        match &$store.pool {
            Pool::Sqlite(pool) => {
                sqlx::query($sql)$(.bind($arg))*.fetch_all(pool).await?.iter().map($decode).collect::<Result<Vec<_>>>()?
            }
            Pool::Postgres(pool) => {
                sqlx::query(&numbered($sql))$(.bind($arg))*.fetch_all(pool).await?.iter().map($decode).collect::<Result<Vec<_>>>()?
            }
        }
    };
    ($store:expr, optional($decode:expr), $sql:expr $(, $arg:expr)*) => {
        match &$store.pool {
            Pool::Sqlite(pool) => sqlx::query($sql)$(.bind($arg))*.fetch_optional(pool).await?.as_ref().map($decode).transpose()?,
            Pool::Postgres(pool) => {
                sqlx::query(&numbered($sql))$(.bind($arg))*.fetch_optional(pool).await?.as_ref().map($decode).transpose()?
            }
        }
    };
}

/// Runs `$body` in one transaction on whichever database: `$tx` is the transaction and `$sql`
/// turns a `?`-placeholder statement into the database's own.
macro_rules! transaction {
    ($store:expr, |$tx:ident, $sql:ident| $body:block) => {
        match &$store.pool {
            Pool::Sqlite(pool) => {
                let mut $tx = pool.begin().await?;
                let $sql = |statement: &str| statement.to_string();
                let out = $body;
                $tx.commit().await?;
                out
            }
            Pool::Postgres(pool) => {
                let mut $tx = pool.begin().await?;
                let $sql = numbered;
                let out = $body;
                $tx.commit().await?;
                out
            }
        }
    };
}

mod populations;
pub use populations::{relative_folder, Entry, NewJob, PopulationRecord};

/// Claims the oldest claimable job, evaluations first (they are short and decide a population's
/// next rounds); `{kind}` narrows the kinds, `{lock}` is where Postgres's row lock goes.
const CLAIM: &str = "UPDATE jobs SET state = 'running', lease_owner = ?, lease_until = ?, \
     started_at = COALESCE(started_at, ?), restarts = restarts + (CASE WHEN state = 'running' THEN 1 ELSE 0 END) \
     WHERE id = (SELECT id FROM jobs WHERE (state IN ('queued', 'interrupted') OR (state = 'running' AND lease_until < ?)) \
     {kind} ORDER BY CASE WHEN kind = 'evaluation' THEN 0 ELSE 1 END, created_at, id LIMIT 1 {lock}) RETURNING *";

impl Store {
    /// Opens (creating) `data_dir/rlsolver.db` and migrates it. WAL + synchronous=FULL: a
    /// committed row survives a crash of the process or the machine.
    pub async fn open(data_dir: &Path) -> Result<Store> {
        std::fs::create_dir_all(data_dir).with_context(|| format!("creating {}", data_dir.display()))?;
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", data_dir.join("rlsolver.db").display()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .context("opening the SQLite store")?;
        sqlx::migrate!("src/store/migrations").run(&pool).await.context("migrating the store")?;
        Ok(Store { pool: Pool::Sqlite(pool) })
    }

    /// Connects to a PostgreSQL database (`postgres://user:password@host:port/db`) and migrates
    /// it; gives up after `timeout` when the server does not answer.
    pub async fn connect_postgres(url: &str, timeout: Duration) -> Result<Store> {
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(timeout)
            .connect(url)
            .await
            .context("connecting to the PostgreSQL store")?;
        sqlx::migrate!("src/store/migrations_postgres").run(&pool).await.context("migrating the PostgreSQL store")?;
        Ok(Store { pool: Pool::Postgres(pool) })
    }

    /// `sqlite` or `postgres`.
    pub fn backend(&self) -> &'static str {
        match self.pool {
            Pool::Sqlite(_) => "sqlite",
            Pool::Postgres(_) => "postgres",
        }
    }

    /// True when the database answers.
    pub async fn ping(&self) -> bool {
        async fn select_one(store: &Store) -> Result<u64> {
            Ok(statement!(store, execute, "SELECT 1"))
        }
        select_one(self).await.is_ok()
    }

    /// Queues a job submitted by `owner` (None: keys are not configured).
    pub async fn insert_job(
        &self,
        id: &str,
        kind: &str,
        request: &serde_json::Value,
        owner: Option<&str>,
    ) -> Result<()> {
        statement!(
            self,
            execute,
            "INSERT INTO jobs (id, kind, state, request, created_at, owner) VALUES (?, ?, 'queued', ?, ?, ?)",
            id,
            kind,
            request.to_string(),
            now(),
            owner
        );
        Ok(())
    }

    pub async fn job(&self, id: &str) -> Result<Option<JobRecord>> {
        Ok(statement!(self, optional(record), "SELECT * FROM jobs WHERE id = ?", id))
    }

    /// Jobs of `kind`, newest first, optionally in one state and of one owner.
    pub async fn jobs(
        &self,
        kind: &str,
        state: Option<JobState>,
        owner: Option<&str>,
        limit: i64,
    ) -> Result<Vec<JobRecord>> {
        // A NULL parameter matches every row: one statement for all four filters.
        Ok(statement!(
            self,
            all(record),
            "SELECT * FROM jobs WHERE kind = ? AND (? IS NULL OR state = ?) AND (? IS NULL OR owner = ?) \
             ORDER BY created_at DESC LIMIT ?",
            kind,
            state.map(JobState::as_str),
            state.map(JobState::as_str),
            owner,
            owner,
            limit
        ))
    }

    /// Jobs per state (all kinds), for `/metrics`.
    pub async fn count_by_state(&self) -> Result<Vec<(String, String, i64)>> {
        Ok(statement!(self, all(state_count), "SELECT kind, state, COUNT(*) AS n FROM jobs GROUP BY kind, state"))
    }

    pub async fn set_steps(&self, id: &str, steps: i64) -> Result<()> {
        statement!(self, execute, "UPDATE jobs SET steps = ? WHERE id = ?", steps, id);
        Ok(())
    }

    /// Appends a point (an evaluation, an incumbent) to the job's curve and makes it the latest,
    /// in one transaction; returns its place in the curve (from 0).
    pub async fn add_metric(&self, id: &str, value: &serde_json::Value) -> Result<i64> {
        const APPEND: &str = "INSERT INTO job_metrics (job_id, seq, value) \
             VALUES (?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM job_metrics WHERE job_id = ?), ?) RETURNING seq";
        const LATEST: &str = "UPDATE jobs SET latest = ? WHERE id = ?";
        let text = value.to_string();
        let seq = transaction!(self, |tx, sql| {
            let (seq,): (i64,) = sqlx::query_as(&sql(APPEND)).bind(id).bind(id).bind(&text).fetch_one(&mut *tx).await?;
            sqlx::query(&sql(LATEST)).bind(&text).bind(id).execute(&mut *tx).await?;
            seq
        });
        Ok(seq)
    }

    /// Drops a job's curve (a job restarted from scratch records it again).
    pub async fn clear_metrics(&self, id: &str) -> Result<()> {
        statement!(self, execute, "DELETE FROM job_metrics WHERE job_id = ?", id);
        Ok(())
    }

    pub async fn metrics(&self, id: &str) -> Result<Vec<serde_json::Value>> {
        self.metrics_from(id, 0).await
    }

    /// The job's curve from its `first`-th point on (what a stream has not sent yet).
    pub async fn metrics_from(&self, id: &str, first: i64) -> Result<Vec<serde_json::Value>> {
        Ok(statement!(
            self,
            all(metric_value),
            "SELECT value FROM job_metrics WHERE job_id = ? AND seq >= ? ORDER BY seq",
            id,
            first
        ))
    }

    /// At start of a single server: every job left `running` by a stopped server becomes
    /// `interrupted`; returns the ids to re-queue (interrupted and queued, oldest first) and counts
    /// the restart. (Replicas sharing a database claim with leases instead.)
    pub async fn recover(&self) -> Result<Vec<JobRecord>> {
        const INTERRUPT: &str =
            "UPDATE jobs SET state = 'interrupted', restarts = restarts + 1 WHERE state = 'running'";
        const PENDING: &str = "SELECT * FROM jobs WHERE state IN ('interrupted', 'queued') ORDER BY created_at";
        transaction!(self, |tx, sql| {
            sqlx::query(&sql(INTERRUPT)).execute(&mut *tx).await?;
            let rows = sqlx::query(&sql(PENDING)).fetch_all(&mut *tx).await?;
            rows.iter().map(record).collect()
        })
    }

    /// Hands the oldest claimable job of the kinds `kinds` admits to `owner` with a lease of
    /// `lease`: a queued or interrupted job, or a running one whose lease has expired (its worker
    /// died, hung or lost the database; that counts as a restart). None when nothing is claimable.
    pub async fn claim(&self, owner: &str, lease: Duration, kinds: Kinds) -> Result<Option<JobRecord>> {
        let now = now();
        let until = now + lease.as_secs_f64();
        let lock = match self.pool {
            Pool::Sqlite(_) => "",
            Pool::Postgres(_) => "FOR UPDATE SKIP LOCKED",
        };
        let (filter, kind) = match kinds {
            Kinds::Any => ("", None),
            Kinds::Only(kind) => ("AND kind = ?", Some(kind)),
            Kinds::Except(kind) => ("AND kind <> ?", Some(kind)),
        };
        let sql = CLAIM.replace("{lock}", lock).replace("{kind}", filter);
        Ok(match kind {
            Some(kind) => statement!(self, optional(record), &sql, owner, until, now, now, kind),
            None => statement!(self, optional(record), &sql, owner, until, now, now),
        })
    }

    /// Extends `owner`'s lease on job `id`, and says whether a cancel was requested meanwhile.
    pub async fn renew(&self, id: &str, owner: &str, lease: Duration) -> Result<Lease> {
        let until = now() + lease.as_secs_f64();
        let flag = statement!(
            self,
            optional(cancel_flag),
            "UPDATE jobs SET lease_until = ? WHERE id = ? AND lease_owner = ? AND state = 'running' \
             RETURNING cancel_requested",
            until,
            id,
            owner
        );
        Ok(flag.map_or(Lease::Lost, |cancel_requested| Lease::Held { cancel_requested }))
    }

    /// Asks the replica running job `id` to stop it (it reads this when it renews the lease);
    /// false when the job is not running.
    pub async fn request_cancel(&self, id: &str) -> Result<bool> {
        let updated =
            statement!(self, execute, "UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND state = 'running'", id);
        Ok(updated == 1)
    }

    /// Hands a job `owner` runs back to the queue as `interrupted` (a restart, as a lapsed lease
    /// counts one), for whichever replica claims next to resume it; false when `owner` no longer
    /// holds it or a cancel was requested (the job then ends `cancelled`, as asked).
    pub async fn release(&self, id: &str, owner: &str) -> Result<bool> {
        let updated = statement!(
            self,
            execute,
            "UPDATE jobs SET state = 'interrupted', restarts = restarts + 1, lease_owner = NULL, lease_until = NULL \
             WHERE id = ? AND lease_owner = ? AND state = 'running' AND cancel_requested = 0",
            id,
            owner
        );
        Ok(updated == 1)
    }

    /// Cancels job `id` if nobody has claimed it yet (queued or interrupted); false otherwise.
    pub async fn cancel_waiting(&self, id: &str) -> Result<bool> {
        let updated = statement!(
            self,
            execute,
            "UPDATE jobs SET state = 'cancelled', finished_at = ? WHERE id = ? AND state IN ('queued', 'interrupted')",
            now(),
            id
        );
        Ok(updated == 1)
    }

    /// Jobs waiting for a worker (queued or interrupted), over every replica.
    pub async fn waiting_count(&self) -> Result<i64> {
        let n = statement!(
            self,
            optional(count),
            "SELECT COUNT(*) AS n FROM jobs WHERE state IN ('queued', 'interrupted')"
        );
        Ok(n.unwrap_or(0))
    }

    /// `finish` for a claimed job: only while `owner` holds its lease (false otherwise, and
    /// nothing is written), so a job that changed hands ends exactly once.
    pub async fn finish_claimed(
        &self,
        id: &str,
        owner: &str,
        state: JobState,
        result: Option<&serde_json::Value>,
        error: Option<&str>,
    ) -> Result<bool> {
        let updated = statement!(
            self,
            execute,
            "UPDATE jobs SET state = ?, finished_at = ?, result = ?, error = ?, lease_owner = NULL, lease_until = NULL \
             WHERE id = ? AND lease_owner = ? AND state = 'running'",
            state.as_str(),
            now(),
            result.map(|r| r.to_string()),
            error,
            id,
            owner
        );
        Ok(updated == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn jobs_and_curves_survive_reopening_and_running_jobs_come_back_interrupted() {
        let dir = std::env::temp_dir().join(format!("rlsolver-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let store = Store::open(&dir).await.unwrap();
            store.insert_job("a", "training", &serde_json::json!({"algorithm": "ppo"}), None).await.unwrap();
            store.insert_job("b", "training", &serde_json::json!({"algorithm": "dqn"}), None).await.unwrap();
            let lease = Duration::from_secs(60);
            assert_eq!(store.claim("t", lease, Kinds::Any).await.unwrap().unwrap().id, "a");
            assert_eq!(store.add_metric("a", &serde_json::json!({"step": 10})).await.unwrap(), 0);
            assert_eq!(store.add_metric("a", &serde_json::json!({"step": 20})).await.unwrap(), 1);
            assert_eq!(store.claim("t", lease, Kinds::Any).await.unwrap().unwrap().id, "b");
            let result = serde_json::json!({"steps": 5});
            assert!(store.finish_claimed("b", "t", JobState::Succeeded, Some(&result), None).await.unwrap());
        }
        let store = Store::open(&dir).await.unwrap();
        let recovered = store.recover().await.unwrap();
        assert_eq!(recovered.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(), vec!["a"]);
        assert_eq!(recovered[0].state, JobState::Interrupted);
        assert_eq!(recovered[0].restarts, 1);
        assert_eq!(
            store.metrics("a").await.unwrap(),
            vec![serde_json::json!({"step": 10}), serde_json::json!({"step": 20})]
        );
        assert_eq!(store.job("a").await.unwrap().unwrap().latest, Some(serde_json::json!({"step": 20})));
        let b = store.job("b").await.unwrap().unwrap();
        assert_eq!((b.state, b.result), (JobState::Succeeded, Some(serde_json::json!({"steps": 5}))));
        assert_eq!(store.jobs("training", Some(JobState::Succeeded), None, 10).await.unwrap().len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

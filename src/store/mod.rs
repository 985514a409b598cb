//! The durable store: jobs and their evaluation curves in SQLite (through sqlx, so a Postgres
//! pool can replace it for several replicas). Schema migrations live in `migrations/` and run at
//! open. Timestamps are unix seconds.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::Row;
use std::path::Path;
use std::str::FromStr;
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
    /// How often a server restart re-queued it.
    pub restarts: i64,
}

pub fn now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
}

fn parse_json(text: Option<String>) -> Option<serde_json::Value> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

fn record(row: &sqlx::sqlite::SqliteRow) -> Result<JobRecord> {
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
    })
}

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
            .busy_timeout(std::time::Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .context("opening the SQLite store")?;
        sqlx::migrate!("src/store/migrations").run(&pool).await.context("migrating the store")?;
        Ok(Store { pool })
    }

    /// True when the database answers.
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").execute(&self.pool).await.is_ok()
    }

    pub async fn insert_job(&self, id: &str, kind: &str, request: &serde_json::Value) -> Result<()> {
        sqlx::query("INSERT INTO jobs (id, kind, state, request, created_at) VALUES (?, ?, 'queued', ?, ?)")
            .bind(id)
            .bind(kind)
            .bind(request.to_string())
            .bind(now())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn job(&self, id: &str) -> Result<Option<JobRecord>> {
        let row = sqlx::query("SELECT * FROM jobs WHERE id = ?").bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(record).transpose()
    }

    /// Jobs of `kind`, newest first, optionally in one state.
    pub async fn jobs(&self, kind: &str, state: Option<JobState>, limit: i64) -> Result<Vec<JobRecord>> {
        let rows = match state {
            Some(s) => {
                sqlx::query("SELECT * FROM jobs WHERE kind = ? AND state = ? ORDER BY created_at DESC LIMIT ?")
                    .bind(kind)
                    .bind(s.as_str())
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
            }
            None => {
                sqlx::query("SELECT * FROM jobs WHERE kind = ? ORDER BY created_at DESC LIMIT ?")
                    .bind(kind)
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        rows.iter().map(record).collect()
    }

    /// Jobs per state (all kinds), for `/metrics`.
    pub async fn count_by_state(&self) -> Result<Vec<(String, String, i64)>> {
        let rows = sqlx::query("SELECT kind, state, COUNT(*) AS n FROM jobs GROUP BY kind, state")
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| Ok((r.try_get("kind")?, r.try_get("state")?, r.try_get("n")?))).collect()
    }

    pub async fn mark_running(&self, id: &str) -> Result<()> {
        sqlx::query("UPDATE jobs SET state = 'running', started_at = COALESCE(started_at, ?) WHERE id = ?")
            .bind(now())
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Ends a job (terminal state) with its outcome or error.
    pub async fn finish(
        &self,
        id: &str,
        state: JobState,
        result: Option<&serde_json::Value>,
        error: Option<&str>,
    ) -> Result<()> {
        sqlx::query("UPDATE jobs SET state = ?, finished_at = ?, result = ?, error = ? WHERE id = ?")
            .bind(state.as_str())
            .bind(now())
            .bind(result.map(|r| r.to_string()))
            .bind(error)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn set_steps(&self, id: &str, steps: i64) -> Result<()> {
        sqlx::query("UPDATE jobs SET steps = ? WHERE id = ?").bind(steps).bind(id).execute(&self.pool).await?;
        Ok(())
    }

    /// Appends an evaluation to the job's curve and makes it the latest.
    pub async fn add_metric(&self, id: &str, value: &serde_json::Value) -> Result<()> {
        let text = value.to_string();
        let mut tx = self.pool.begin().await?;
        sqlx::query("INSERT INTO job_metrics (job_id, seq, value) VALUES (?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM job_metrics WHERE job_id = ?), ?)")
            .bind(id)
            .bind(id)
            .bind(&text)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE jobs SET latest = ? WHERE id = ?").bind(&text).bind(id).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Drops a job's curve (a job restarted from scratch records it again).
    pub async fn clear_metrics(&self, id: &str) -> Result<()> {
        sqlx::query("DELETE FROM job_metrics WHERE job_id = ?").bind(id).execute(&self.pool).await?;
        Ok(())
    }

    pub async fn metrics(&self, id: &str) -> Result<Vec<serde_json::Value>> {
        let rows = sqlx::query("SELECT value FROM job_metrics WHERE job_id = ? ORDER BY seq")
            .bind(id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| Ok(serde_json::from_str(&r.try_get::<String, _>("value")?)?)).collect()
    }

    /// At start: every job left `running` by a stopped server becomes `interrupted`; returns
    /// the ids to re-queue (interrupted and queued, oldest first) and counts the restart.
    pub async fn recover(&self) -> Result<Vec<JobRecord>> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("UPDATE jobs SET state = 'interrupted', restarts = restarts + 1 WHERE state = 'running'")
            .execute(&mut *tx)
            .await?;
        let rows = sqlx::query("SELECT * FROM jobs WHERE state IN ('interrupted', 'queued') ORDER BY created_at")
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        rows.iter().map(record).collect()
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
            store.insert_job("a", "training", &serde_json::json!({"algorithm": "ppo"})).await.unwrap();
            store.insert_job("b", "training", &serde_json::json!({"algorithm": "dqn"})).await.unwrap();
            store.mark_running("a").await.unwrap();
            store.add_metric("a", &serde_json::json!({"step": 10})).await.unwrap();
            store.add_metric("a", &serde_json::json!({"step": 20})).await.unwrap();
            store.mark_running("b").await.unwrap();
            store.finish("b", JobState::Succeeded, Some(&serde_json::json!({"steps": 5})), None).await.unwrap();
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
        assert_eq!(store.jobs("training", Some(JobState::Succeeded), 10).await.unwrap().len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

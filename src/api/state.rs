//! Shared state of every handler.

use super::auth::ApiKeys;
use super::metrics::HttpMetrics;
use crate::jobs::training::TrainingLimits;
use crate::jobs::{JobManager, JobsConfig};
use crate::models::ModelRegistry;
use crate::problems::{Limits, ProblemSet, SolveContext};
use crate::store::{Kinds, Store};
use anyhow::Result;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::Semaphore;

/// What one process of the binary does: several replicas share a PostgreSQL store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    /// The whole API and the job workers (one server).
    #[default]
    All,
    /// The whole API, no job workers: accepted jobs wait for a worker replica.
    Api,
    /// Job workers only, claiming every kind but population evaluations (those go to an
    /// `Evaluator` or `All` replica); its HTTP answers /health, /ready and /metrics (for probes
    /// and scrapes).
    Worker,
    /// Like `Worker`, but claims only population evaluations (checkpoints scored on fresh
    /// seeds, off the learners' path).
    Evaluator,
    /// One off-policy agent's replay and updates (Ape-X; `ServerConfig::learn`): its HTTP takes
    /// transition batches and serves weights under `/v1/learner`, plus the probes.
    Learner,
    /// Steps envs for the learner at `ServerConfig::learner_url` and streams the transitions;
    /// stops when the learner is done. HTTP: the probes.
    Rollout,
}

impl Role {
    const ALL: [Role; 6] = [Role::All, Role::Api, Role::Worker, Role::Evaluator, Role::Learner, Role::Rollout];

    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.name() == name)
    }

    /// The `--role` value.
    pub fn name(self) -> &'static str {
        match self {
            Role::All => "all",
            Role::Api => "api",
            Role::Worker => "worker",
            Role::Evaluator => "evaluator",
            Role::Learner => "learner",
            Role::Rollout => "rollout",
        }
    }
}

/// Server settings beyond the instance limits.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub limits: Limits,
    /// Largest request body in bytes.
    pub max_body_bytes: usize,
    /// Solves running at once; more get 503 with Retry-After.
    pub max_concurrent_solves: usize,
    /// SQLite store and job folders live here.
    pub data_dir: PathBuf,
    /// A PostgreSQL store shared by replicas instead of `data_dir`'s SQLite (which then holds
    /// only the job folders, shared by the replicas too).
    pub database_url: Option<String>,
    /// API, workers or both (default both).
    pub role: Role,
    /// Training worker pool and queue bound.
    pub jobs: JobsConfig,
    pub training_limits: TrainingLimits,
    /// What a `Learner` replica trains.
    pub learn: Option<crate::drl::apex::ApexConfig>,
    /// The learner a `Rollout` replica feeds (`http://host:port`).
    pub learner_url: Option<String>,
    /// Caps on population requests (size, rounds).
    pub population_limits: crate::jobs::population::PopulationLimits,
    /// API keys with their scopes and owners (see `auth`); empty = no authentication (the
    /// server then binds to loopback only).
    pub api_keys: Vec<super::auth::KeyEntry>,
    /// Origins allowed by CORS (`*` = any); empty = no CORS headers.
    pub cors_origins: Vec<String>,
    /// After SIGTERM, how long the server keeps accepting with `/ready` at 503 before it closes
    /// the listener (a load balancer's probe period); zero closes at once.
    pub shutdown_drain: std::time::Duration,
    /// The shipped models (read-only); promoted ones live under `data_dir/models`.
    pub models_dir: PathBuf,
    /// The problems served (the built-in ones by default).
    pub problems: ProblemSet,
}

impl Default for ServerConfig {
    /// Limits as documented in the README; the data folder is a fresh one under the system's
    /// temporary folder (the CLI's default is `./data`), named by a random UUID: a name from the
    /// process id can be an earlier process's folder, whose unfinished jobs the store would
    /// re-queue ahead of this server's own.
    fn default() -> Self {
        let unique = format!("rlsolver-data-{}", uuid::Uuid::new_v4());
        ServerConfig {
            limits: Limits::default(),
            max_body_bytes: 64 << 20,
            max_concurrent_solves: 2,
            data_dir: std::env::temp_dir().join(unique),
            database_url: None,
            role: Role::All,
            jobs: JobsConfig::default(),
            training_limits: TrainingLimits::default(),
            population_limits: Default::default(),
            learn: None,
            learner_url: None,
            api_keys: Vec::new(),
            cors_origins: Vec::new(),
            shutdown_drain: std::time::Duration::ZERO,
            models_dir: crate::models::default_dir(),
            problems: ProblemSet::builtin(),
        }
    }
}

#[derive(Clone)]
pub struct AppState {
    pub config: Arc<ServerConfig>,
    pub solve_slots: Arc<Semaphore>,
    pub jobs: Arc<JobManager>,
    pub keys: Arc<ApiKeys>,
    pub metrics: Arc<HttpMetrics>,
    /// The problems, models and limits every solve of this server runs against.
    pub solve: SolveContext,
    /// The learner role's agent, replay and published weights.
    pub learner: Option<Arc<crate::drl::apex::learner::Shared>>,
    /// `GET /openapi.json`'s document, built on its first request (it reads every env's spaces)
    /// and served from here after: it depends only on this server's flags.
    pub openapi: Arc<std::sync::OnceLock<String>>,
    ready: Arc<AtomicBool>,
}

impl AppState {
    /// Opens the store (migrating it), starts the job workers and re-queues unfinished jobs.
    pub async fn open(config: ServerConfig) -> Result<Self> {
        // The shipped models, then what earlier runs promoted into the data folder.
        let models = Arc::new(ModelRegistry::load_dir(&config.models_dir, crate::problems::policy_loaders));
        models.load_promoted(&config.data_dir.join("models"));
        let dir = config.models_dir.display().to_string();
        tracing::info!(loaded = models.models.len(), refused = models.rejected.len(), %dir, "model registry");
        let store = match &config.database_url {
            Some(url) => Store::connect_postgres(url, std::time::Duration::from_secs(10)).await?,
            None => Store::open(&config.data_dir).await?,
        };
        let solve = SolveContext { problems: config.problems.clone(), models, limits: config.limits.clone() };
        let mut jobs_config = config.jobs.clone();
        match config.role {
            Role::Api | Role::Learner | Role::Rollout => jobs_config.workers = 0,
            Role::Worker => jobs_config.kinds = Kinds::Except(crate::jobs::population::EVALUATION),
            Role::Evaluator => jobs_config.kinds = Kinds::Only(crate::jobs::population::EVALUATION),
            Role::All => {}
        }
        let jobs = JobManager::start(store, &config.data_dir, jobs_config, solve.clone()).await?;
        let learner = match (config.role, &config.learn) {
            (Role::Learner, Some(learn)) => Some(crate::drl::apex::learner::start(crate::drl::apex::ApexConfig {
                envs: config.jobs.envs.clone(),
                ..learn.clone()
            })?),
            (Role::Learner, None) => anyhow::bail!("--role learner needs --learn FILE (what to train)"),
            _ => None,
        };
        Ok(AppState {
            solve_slots: Arc::new(Semaphore::new(config.max_concurrent_solves.max(1))),
            keys: Arc::new(ApiKeys::new(&config.api_keys)),
            metrics: Arc::new(HttpMetrics::default()),
            config: Arc::new(config),
            jobs,
            solve,
            learner,
            openapi: Arc::default(),
            ready: Arc::new(AtomicBool::new(true)),
        })
    }

    /// Ready: not draining and the store answering (the models load before the server listens).
    pub async fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst) && self.jobs.store().ping().await
    }

    /// Called when shutdown starts, so that load balancers stop sending work.
    pub fn set_draining(&self) {
        self.ready.store(false, Ordering::SeqCst);
    }
}

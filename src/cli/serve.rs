//! `rlsolver serve`: the HTTP service with its flags.

use anyhow::{Context, Result};
use clap::Args;
use rlsolver::api::state::ServerConfig;
use rlsolver::problems::Limits;
use std::path::PathBuf;

#[derive(Args)]
pub struct ServeArgs {
    /// Address to bind.
    #[arg(long, env = "RLSOLVER_HOST", default_value = "127.0.0.1")]
    host: String,
    /// Port to bind (0: any free port).
    #[arg(long, env = "RLSOLVER_PORT", default_value_t = 8080)]
    port: u16,
    /// Largest request body in bytes.
    #[arg(long, env = "RLSOLVER_MAX_BODY_BYTES", default_value_t = ServerConfig::default().max_body_bytes)]
    max_body_bytes: usize,
    /// Solves running at once; more get 503 with Retry-After.
    #[arg(long, env = "RLSOLVER_MAX_CONCURRENT_SOLVES", default_value_t = ServerConfig::default().max_concurrent_solves)]
    max_concurrent_solves: usize,
    /// The model registry folder (`<name>/manifest.json` + `weights.safetensors` each).
    #[arg(long, env = "RLSOLVER_MODELS_DIR", default_value = "models")]
    models_dir: PathBuf,
    /// SQLite store (rlsolver.db) and job folders (checkpoints, artifacts); replicas sharing a
    /// PostgreSQL store must share this folder too.
    #[arg(long, env = "RLSOLVER_DATA_DIR", default_value = "data")]
    data_dir: PathBuf,
    /// A PostgreSQL store shared by several replicas (postgres://user:password@host:port/db)
    /// instead of the embedded SQLite one.
    #[arg(long, env = "RLSOLVER_DATABASE_URL")]
    database_url: Option<String>,
    /// Seconds of a running job's lease: a replica that stops renewing it (killed, hung, cut off)
    /// loses the job to another replica this long after its last renewal.
    #[arg(long, env = "RLSOLVER_JOB_LEASE_S", default_value_t = rlsolver::jobs::JobsConfig::default().lease.as_secs_f64())]
    job_lease_s: f64,
    /// This replica's name in job leases (a job's `runner`; default: a fresh one).
    #[arg(long, env = "RLSOLVER_REPLICA")]
    replica: Option<String>,
    /// Log lines as `text` or `json` (one object a line: level, message, fields such as the
    /// request id, route, status, latency and job id).
    #[arg(long, env = "RLSOLVER_LOG_FORMAT", default_value = "text")]
    log_format: String,
    /// Log lines queued for stderr; beyond this (a reader that stalls) lines are dropped and
    /// counted in /metrics (`rlsolver_log_lines_dropped`) instead of blocking requests.
    #[arg(long, env = "RLSOLVER_LOG_BUFFER_LINES", default_value_t = 10_000)]
    log_buffer_lines: usize,
    /// all (API and job workers), api (no workers), worker (job workers; HTTP only /health,
    /// /ready and /metrics), evaluator (a worker that only scores population checkpoints),
    /// learner (one off-policy agent's replay and updates, --learn) or rollout (steps envs for
    /// the --learner-url learner). Several replicas share a --database-url store.
    #[arg(long, env = "RLSOLVER_ROLE", default_value = "all")]
    role: String,
    /// learner: what to train, a JSON file (algorithm, env, seed, hyperparameters, updates,
    /// broadcast_every, send_every, eval_episodes).
    #[arg(long, env = "RLSOLVER_LEARN")]
    learn: Option<PathBuf>,
    /// rollout: the learner's base URL (its API key, if any, in RLSOLVER_LEARNER_KEY).
    #[arg(long, env = "RLSOLVER_LEARNER_URL")]
    learner_url: Option<String>,
    /// API keys, one `KEY [SCOPES [NAME]]` a line (SCOPES: read, submit, admin joined by '+');
    /// every /v1 request then needs `Authorization: Bearer <key>`.
    #[arg(long, env = "RLSOLVER_API_KEYS_FILE")]
    api_keys_file: Option<PathBuf>,
    /// Training jobs running at once.
    #[arg(long, env = "RLSOLVER_TRAINING_WORKERS", default_value_t = rlsolver::jobs::JobsConfig::default().workers)]
    training_workers: usize,
    /// Training jobs waiting for a worker; more get 429 with Retry-After.
    #[arg(long, env = "RLSOLVER_MAX_QUEUED_JOBS", default_value_t = rlsolver::jobs::JobsConfig::default().max_queued)]
    max_queued_jobs: usize,
    /// Largest step budget of a training job.
    #[arg(long, env = "RLSOLVER_MAX_TRAINING_STEPS", default_value_t = rlsolver::jobs::training::TrainingLimits::default().max_total_steps)]
    max_training_steps: usize,
    /// Largest number of network parameters of a training job (estimated before it starts).
    #[arg(long, env = "RLSOLVER_MAX_TRAINING_PARAMETERS", default_value_t = rlsolver::jobs::budget::ResourceLimits::default().max_parameters)]
    max_training_parameters: u64,
    /// Largest memory of a training job in MiB: parameters, gradients, optimizer state, targets, replay.
    #[arg(long, env = "RLSOLVER_MAX_TRAINING_MEMORY_MB", default_value_t = rlsolver::jobs::budget::ResourceLimits::default().max_memory_bytes >> 20)]
    max_training_memory_mb: u64,
    /// Origins allowed by CORS, comma-separated (`*` = any; default none).
    #[arg(long, env = "RLSOLVER_CORS_ORIGINS", value_delimiter = ',')]
    cors_origins: Vec<String>,
    /// Seconds between SIGTERM and closing the listener: `/ready` answers 503 meanwhile, so a load
    /// balancer's probe sees the replica leave before connections are refused; running requests
    /// finish after it either way.
    #[arg(long, env = "RLSOLVER_SHUTDOWN_DRAIN_S", default_value_t = 0.0)]
    shutdown_drain_s: f64,
    #[command(flatten)]
    limits: Limits,
    #[command(flatten)]
    bridge: super::bridge::BridgeArgs,
}

impl ServeArgs {
    /// Starts the server's logging (`--log-format`, `--log-buffer-lines`).
    pub fn logging(&self) -> Result<tracing_appender::non_blocking::WorkerGuard> {
        super::logging::for_server(&self.log_format, self.log_buffer_lines)
    }
}

pub fn run(args: ServeArgs) -> Result<()> {
    // RLSOLVER_API_KEYS (comma-separated) is read here rather than by clap so it never shows in --help output.
    let api_keys = rlsolver::api::auth::load_keys(
        args.api_keys_file.as_deref(),
        std::env::var("RLSOLVER_API_KEYS").ok().as_deref(),
    )?;
    let host = rlsolver::api::auth::serving_host(&args.host, api_keys.len());
    let config = ServerConfig {
        limits: args.limits,
        max_body_bytes: args.max_body_bytes,
        max_concurrent_solves: args.max_concurrent_solves,
        data_dir: args.data_dir.clone(),
        database_url: args.database_url.clone(),
        role: rlsolver::api::state::Role::parse(&args.role)
            .with_context(|| format!("--role: all, api, worker, evaluator, learner or rollout, not '{}'", args.role))?,
        jobs: rlsolver::jobs::JobsConfig {
            workers: args.training_workers,
            max_queued: args.max_queued_jobs,
            lease: std::time::Duration::try_from_secs_f64(args.job_lease_s)
                .ok()
                .filter(|d| *d >= std::time::Duration::from_millis(300))
                .context("--job-lease-s: at least 0.3 seconds")?,
            replica: args.replica.clone(),
            envs: args.bridge.envs()?,
            ..Default::default()
        },
        training_limits: rlsolver::jobs::training::TrainingLimits {
            max_total_steps: args.max_training_steps,
            resources: rlsolver::jobs::budget::ResourceLimits {
                max_parameters: args.max_training_parameters,
                max_memory_bytes: args.max_training_memory_mb << 20,
            },
            ..Default::default()
        },
        population_limits: Default::default(),
        learn: match &args.learn {
            Some(path) => Some(
                serde_json::from_str(
                    &std::fs::read_to_string(path).with_context(|| format!("--learn: reading {}", path.display()))?,
                )
                .with_context(|| format!("--learn: {}", path.display()))?,
            ),
            None => None,
        },
        learner_url: args.learner_url.clone(),
        api_keys,
        cors_origins: args.cors_origins.clone(),
        shutdown_drain: std::time::Duration::try_from_secs_f64(args.shutdown_drain_s)
            .ok()
            .filter(|d| *d <= std::time::Duration::from_secs(600))
            .context("--shutdown-drain-s: 0 to 600 seconds")?,
        models_dir: args.models_dir.clone(),
        problems: rlsolver::problems::ProblemSet::builtin(),
    };
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((host.as_str(), args.port))
            .await
            .with_context(|| format!("binding {host}:{}", args.port))?;
        rlsolver::api::serve(listener, config).await?;
        Ok(())
    })
}

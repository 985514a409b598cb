//! Background jobs (training runs and long solves): accepted requests are rows in the store
//! before the client hears 202; a bounded pool of workers claims them from the store under a
//! lease (`Store::claim`) and runs them off the async runtime (`spawn_blocking`), renewing the
//! lease every third of its length; progress, evaluations and incumbents go to the store and to
//! per-job event channels (the SSE streams). Any number of replicas can share a PostgreSQL store:
//! a job whose replica stops renewing (killed, hung, cut off from the database) is claimed by
//! another once the lease lapses and resumes from its last checkpoint; a cancel through any
//! replica reaches the runner at its next renewal; a replica that shuts down hands its running
//! jobs back to the queue (`JobManager::stop`). With the embedded SQLite store (one server),
//! `JobManager::start` re-queues at once what a crashed server left running. Single-agent
//! training resumes from its last checkpoint (multi-agent runs and solves start over).

pub mod budget;
pub mod ensemble;
pub mod population;
pub mod solve;
pub mod training;

use crate::drl::hooks::RunHooks;
use crate::problems::SolveContext;
use crate::search::hooks::SearchHooks;
use crate::store::{JobRecord, JobState, Kinds, Lease, PopulationRecord, Store};
use anyhow::Result;
use population::{EvaluationRound, MemberRound, PopulationRequest, EVALUATION, MEMBER};
use serde::Serialize;
use solve::SolveJobRequest;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, Notify};
use training::TrainingRequest;

/// A job's run, off the async runtime: (result summary, cancelled).
type JobWork = Box<dyn FnOnce() -> Result<(serde_json::Value, bool)> + Send>;

pub const TRAINING: &str = "training";
pub const SOLVE: &str = "solve";

/// Pool size, queue bound and leases.
#[derive(Debug, Clone)]
pub struct JobsConfig {
    /// Jobs this replica runs at once (0: it claims none, an API-only replica).
    pub workers: usize,
    /// Jobs waiting for a worker, over every replica; beyond this a submission gets 429 with
    /// Retry-After.
    pub max_queued: usize,
    /// A running job's lease (default 30 s): renewed every third of it; once it lapses another
    /// replica may take the job over.
    pub lease: Duration,
    /// How often an idle worker looks for jobs submitted through other replicas (default 1 s;
    /// a submission to this replica wakes one at once).
    pub poll: Duration,
    /// This replica's name in the leases (`runner` of a job; default: `replica-` and a fresh UUID).
    pub replica: Option<String>,
    /// The job kinds this replica claims (the worker role: all but evaluations; the evaluator
    /// role: only evaluations).
    pub kinds: Kinds,
    /// The envs runs can make (`problems::envs`; a `gymnasium:<id>` one runs its Python as the
    /// flags say): checked at submission, handed to every run.
    pub envs: crate::drl::env::Envs,
}

impl Default for JobsConfig {
    fn default() -> Self {
        JobsConfig {
            workers: 1,
            max_queued: 16,
            lease: Duration::from_secs(30),
            poll: Duration::from_secs(1),
            replica: None,
            kinds: Kinds::Any,
            envs: crate::problems::envs(Default::default()),
        }
    }
}

/// One server-sent event of a job: `state`, `progress`, or a point of its curve (`evaluation`,
/// `incumbent`) with its place in the stored curve.
#[derive(Debug, Clone, Serialize)]
pub struct JobEvent {
    pub event: &'static str,
    pub data: serde_json::Value,
    /// A point's place in the stored curve (None for state and progress, or a point the store
    /// refused): a stream that replays the stored curve first skips the points it has sent.
    #[serde(skip)]
    pub seq: Option<i64>,
}

#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("the job queue is full ({0} waiting); retry later")]
    QueueFull(usize),
    #[error(transparent)]
    Store(#[from] anyhow::Error),
}

struct Live {
    cancel: Arc<AtomicBool>,
    events: broadcast::Sender<JobEvent>,
}

pub struct JobManager {
    store: Store,
    data_dir: PathBuf,
    config: JobsConfig,
    /// What solve jobs run against.
    solve: SolveContext,
    /// This replica's lease owner name.
    owner: String,
    /// Wakes an idle worker when this replica accepts a job.
    wake: Notify,
    live: Mutex<HashMap<String, Live>>,
    /// Set by `stop`: workers claim nothing more and running jobs go back to the queue.
    stopping: AtomicBool,
    /// Set when `stop` has handed this replica's jobs back: streams read from the store end.
    stopped: AtomicBool,
    workers: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// How long `stop` waits for running jobs to hand themselves back: the deploy's 30 s
/// termination grace less its 10 s drain leaves 20 s, of which this takes half.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

impl JobManager {
    /// Starts the worker pool; with the SQLite store, first re-queues the jobs a previous server
    /// left running (with Postgres, other replicas may be running them: their leases decide).
    pub async fn start(
        store: Store,
        data_dir: &Path,
        config: JobsConfig,
        solve: SolveContext,
    ) -> Result<Arc<JobManager>> {
        let owner = config.replica.clone().unwrap_or_else(|| format!("replica-{}", uuid::Uuid::new_v4()));
        if store.backend() == "sqlite" {
            for job in store.recover().await? {
                tracing::warn!(job = %job.id, state = job.state.as_str(), "re-queueing a job the previous server left unfinished");
            }
        }
        let manager = Arc::new(JobManager {
            store,
            data_dir: data_dir.to_path_buf(),
            config,
            solve,
            owner,
            wake: Notify::new(),
            live: Mutex::new(HashMap::new()),
            stopping: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            workers: Mutex::new(Vec::new()),
        });
        tracing::info!(replica = %manager.owner, workers = manager.config.workers, "job workers");
        for _ in 0..manager.config.workers {
            let handle = tokio::spawn(manager.clone().work());
            manager.workers.lock().expect("workers").push(handle);
        }
        Ok(manager)
    }

    /// One worker: claims and runs jobs until `stop`.
    async fn work(self: Arc<Self>) {
        while !self.stopping.load(Ordering::SeqCst) {
            match self.store.claim(&self.owner, self.config.lease, self.config.kinds).await {
                Ok(Some(job)) => {
                    let id = job.id.clone();
                    if let Err(error) = self.clone().execute(job).await {
                        // A job that could not even start (unreadable request, store
                        // error) ends `failed` rather than going round again.
                        let message = client_message(&id, &error);
                        let owner = &self.owner;
                        let _ = self.store.finish_claimed(&id, owner, JobState::Failed, None, Some(&message)).await;
                        self.emit(&id, "state", serde_json::json!({"state": "failed", "error": message}));
                        self.fail_population(&id, &message).await;
                        self.live.lock().expect("live jobs").remove(&id);
                    }
                }
                Ok(None) => {
                    tokio::select! {
                        _ = self.wake.notified() => {}
                        _ = tokio::time::sleep(self.config.poll) => {}
                    }
                }
                Err(error) => {
                    // The database is away: try again (sqlx reconnects the pool).
                    tracing::warn!(error = %format!("{error:#}"), "claiming a job failed");
                    tokio::time::sleep(self.config.poll).await;
                }
            }
        }
    }

    /// The shutdown's end of the job pool: workers claim nothing more, and each running job is
    /// stopped and handed back to the queue as `interrupted` (`Store::release`), so the next
    /// server on this store, or another replica at once, resumes it from its last checkpoint
    /// rather than after a lapsed lease. Waits up to `grace` for the runs' threads, which still
    /// write their last points to the store through this runtime, then closes every job's event
    /// channel here (those streams end; a client reads on through another replica), and marks
    /// the replica `stopped` (streams read from the store end after one last read).
    pub async fn stop(&self, grace: Duration) {
        self.stopping.store(true, Ordering::SeqCst);
        for live in self.live.lock().expect("live jobs").values() {
            live.cancel.store(true, Ordering::SeqCst);
        }
        self.wake.notify_waiters();
        let workers = std::mem::take(&mut *self.workers.lock().expect("workers"));
        let deadline = tokio::time::Instant::now() + grace;
        for worker in workers {
            if tokio::time::timeout_at(deadline, worker).await.is_err() {
                tracing::warn!(
                    grace_s = grace.as_secs_f64(),
                    "a running job did not stop in time; the next claim resumes it"
                );
                break;
            }
        }
        // Streams of jobs this replica will not run end (their channels close).
        self.live.lock().expect("live jobs").clear();
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// Whether `stop` has handed this replica's jobs back.
    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The job's folder: checkpoints, metrics.jsonl, config.json, weights.
    pub fn run_dir(&self, id: &str) -> PathBuf {
        self.data_dir.join("jobs").join(id)
    }

    /// The job's cancel flag, with its event channel made if this replica has none yet.
    fn live_cancel(&self, id: &str) -> Arc<AtomicBool> {
        let mut live = self.live.lock().expect("live jobs");
        let entry = live
            .entry(id.to_string())
            .or_insert_with(|| Live { cancel: Arc::new(AtomicBool::new(false)), events: broadcast::channel(256).0 });
        entry.cancel.clone()
    }

    /// Records a (validated) request of `kind`, submitted by `owner`, and wakes a worker;
    /// returns the job.
    pub async fn submit(
        &self,
        kind: &str,
        request: &impl Serialize,
        owner: Option<&str>,
    ) -> Result<JobRecord, SubmitError> {
        let waiting = self.store.waiting_count().await? as usize;
        if waiting >= self.config.max_queued {
            return Err(SubmitError::QueueFull(waiting));
        }
        let id = uuid::Uuid::new_v4().to_string();
        let request = serde_json::to_value(request).map_err(anyhow::Error::from)?;
        // The channel before the row: a worker may claim, run and end the job before the insert
        // returns, and a channel made after that would never close.
        self.live_cancel(&id);
        if let Err(error) = self.store.insert_job(&id, kind, &request, owner).await {
            self.live.lock().expect("live jobs").remove(&id);
            return Err(error.into());
        }
        self.wake.notify_one();
        Ok(self.store.job(&id).await?.expect("just inserted"))
    }

    /// Files a (validated) population with its members' first rounds and wakes the workers.
    /// Its first rounds count against the queue bound like any submission.
    pub async fn submit_population(
        &self,
        request: &PopulationRequest,
        owner: Option<&str>,
    ) -> Result<PopulationRecord, SubmitError> {
        let waiting = self.store.waiting_count().await? as usize;
        if waiting + request.size > self.config.max_queued {
            return Err(SubmitError::QueueFull(waiting));
        }
        let id = uuid::Uuid::new_v4().to_string();
        let value = serde_json::to_value(request).map_err(anyhow::Error::from)?;
        let first = request.first_rounds(&id);
        self.store.insert_population(&id, &value, owner, request.rounds_total() as i64, &first).await?;
        self.wake.notify_waiters();
        Ok(self.store.population(&id).await?.expect("just inserted"))
    }

    /// Cancels a running population: its waiting rounds are dropped and its running ones stop.
    pub async fn cancel_population(&self, id: &str) -> Result<bool> {
        self.store.end_population(id, JobState::Cancelled, None).await
    }

    /// A failed member or evaluation job fails its population (its rounds stop).
    async fn fail_population(&self, job: &str, message: &str) {
        if let Ok(Some(JobRecord { population_id: Some(population), .. })) = self.store.job(job).await {
            let error = format!("job {job} failed: {message}");
            if let Err(e) = self.store.end_population(&population, JobState::Failed, Some(&error)).await {
                tracing::error!(population, error = %format!("{e:#}"), "failing a population failed");
            }
        }
    }

    /// A receiver of the job's events while it is queued or running (None once it ended).
    pub fn subscribe(&self, id: &str) -> Option<broadcast::Receiver<JobEvent>> {
        self.live.lock().expect("live jobs").get(id).map(|l| l.events.subscribe())
    }

    fn emit(&self, id: &str, event: &'static str, data: serde_json::Value) {
        self.send(id, JobEvent { event, data, seq: None });
    }

    /// Stores a point of the job's curve (from its blocking thread) and sends it.
    fn add_point(&self, runtime: &tokio::runtime::Handle, id: &str, event: &'static str, point: serde_json::Value) {
        let (store, job, stored) = (self.store.clone(), id.to_string(), point.clone());
        let seq = match from_job_thread(runtime, async move { store.add_metric(&job, &stored).await }) {
            Some(Ok(seq)) => Some(seq),
            Some(Err(error)) => {
                tracing::error!(job = %id, error = %format!("{error:#}"), "storing a point of the curve failed");
                None
            }
            None => None,
        };
        self.send(id, JobEvent { event, data: point, seq });
    }

    fn send(&self, id: &str, event: JobEvent) {
        if let Some(live) = self.live.lock().expect("live jobs").get(id) {
            let _ = live.events.send(event);
        }
    }

    /// Cancels `job` if it is queued or running; Err(state) when it has already ended.
    pub async fn cancel(&self, job: &JobRecord) -> Result<Result<JobRecord, JobState>> {
        let id = job.id.as_str();
        if job.state.is_terminal() {
            return Ok(Err(job.state));
        }
        if let Some(live) = self.live.lock().expect("live jobs").get(id) {
            live.cancel.store(true, Ordering::SeqCst);
        }
        if self.store.cancel_waiting(id).await? {
            // Nobody had claimed it: it ends here and no worker will.
            self.emit(id, "state", serde_json::json!({"state": "cancelled"}));
            self.live.lock().expect("live jobs").remove(id);
        } else {
            // Running, here or on another replica: its runner reads this at its next renewal.
            self.store.request_cancel(id).await?;
        }
        Ok(Ok(self.store.job(id).await?.expect("exists")))
    }

    /// Runs a job this replica claimed, keeping its lease until it ends.
    async fn execute(self: Arc<Self>, job: JobRecord) -> Result<()> {
        let id = job.id.as_str();
        // The flag before the check: a `stop` after the check reaches this run through it.
        let cancel = self.live_cancel(id);
        if self.stopping.load(Ordering::SeqCst) && self.store.release(id, &self.owner).await? {
            // Claimed as `stop` began: back to the queue without starting the run.
            self.live.lock().expect("live jobs").remove(id);
            return Ok(());
        }
        let (resume, work): (bool, JobWork) = match job.kind.as_str() {
            MEMBER | EVALUATION => {
                let population = self.population_of(&job).await?;
                let (data_dir, envs) = (self.data_dir.clone(), self.config.envs.clone());
                if job.kind == MEMBER {
                    let round: MemberRound = serde_json::from_value(job.request.clone())?;
                    let hooks = self.run_hooks(id, cancel.clone());
                    (false, Box::new(move || round.run(&data_dir, &population, hooks, &envs)))
                } else {
                    let round: EvaluationRound = serde_json::from_value(job.request.clone())?;
                    (false, Box::new(move || round.run(&data_dir, &population, &envs)))
                }
            }
            SOLVE => {
                let request: SolveJobRequest = serde_json::from_value(job.request.clone())?;
                let (hooks, context) = (self.search_hooks(id, cancel.clone()), self.solve.clone());
                (false, Box::new(move || request.run(&context, hooks)))
            }
            _ => {
                let request: TrainingRequest = serde_json::from_value(job.request.clone())?;
                let run_dir = self.run_dir(id);
                // A run with a checkpoint continues from it exactly; others start over.
                let resume = crate::drl::run::has_checkpoint(&run_dir);
                let (hooks, envs) = (self.run_hooks(id, cancel.clone()), self.config.envs.clone());
                (resume, Box::new(move || request.run(&run_dir, resume, hooks, &envs)))
            }
        };
        if !resume {
            self.store.clear_metrics(id).await?;
        }
        self.emit(id, "state", serde_json::json!({"state": "running", "resumed": resume}));
        tracing::info!(job = %id, kind = %job.kind, resume, replica = %self.owner, "job started");
        let lost = Arc::new(AtomicBool::new(false));
        let keeper = tokio::spawn(self.clone().keep_lease(id.to_string(), cancel, lost.clone()));
        let outcome = tokio::task::spawn_blocking(work).await;
        keeper.abort();
        // The result names the replica that ran the job (where a population's rounds went).
        let signed = |mut result: serde_json::Value| {
            if let Some(fields) = result.as_object_mut() {
                fields.insert("replica".into(), serde_json::json!(self.owner));
            }
            result
        };
        let (state, result, error) = match outcome {
            Ok(Ok((result, false))) => (JobState::Succeeded, Some(signed(result)), None),
            Ok(Ok((result, true))) => (JobState::Cancelled, Some(signed(result)), None),
            Ok(Err(error)) => (JobState::Failed, None, Some(client_message(id, &error))),
            Err(join) => {
                // A panic's message is libtorch's whole trace more often than not.
                let panic = anyhow::Error::msg(join.to_string()).context("the job's run stopped on an internal error");
                (JobState::Failed, None, Some(client_message(id, &panic)))
            }
        };
        // Stopped by `stop`, not by a client's cancel (`release` tells them apart).
        if state == JobState::Cancelled
            && self.stopping.load(Ordering::SeqCst)
            && self.store.release(id, &self.owner).await?
        {
            tracing::info!(job = %id, replica = %self.owner, "the job stopped with the server; back in the queue as interrupted");
            self.emit(id, "state", serde_json::json!({"state": JobState::Interrupted.as_str()}));
            self.live.lock().expect("live jobs").remove(id);
            return Ok(());
        }
        if lost.load(Ordering::SeqCst) {
            // Another replica owns the job now and will end it; this run's outcome is void.
            tracing::warn!(job = %id, replica = %self.owner, "the job's lease lapsed; another replica took it over");
            self.live.lock().expect("live jobs").remove(id);
            return Ok(());
        }
        if let Some(steps) = result.as_ref().and_then(|r| r["steps"].as_i64().or(r["rounds"].as_i64())) {
            self.outlasting_outages("recording the steps", || self.store.set_steps(id, steps)).await?;
        }
        if let (JobState::Succeeded, Some(result)) = (state, &result) {
            // Queued before the job ends, and idempotent: a job retried after a crash between
            // the two queues its follow-up once.
            self.outlasting_outages("queueing the follow-up", || self.follow_up(&job, result)).await?;
        }
        let finished = self
            .outlasting_outages("ending the job", || {
                self.store.finish_claimed(id, &self.owner, state, result.as_ref(), error.as_deref())
            })
            .await?;
        if !finished {
            tracing::warn!(job = %id, replica = %self.owner, "the job's lease lapsed as it ended; its new runner ends it");
            self.live.lock().expect("live jobs").remove(id);
            return Ok(());
        }
        tracing::info!(job = %id, state = state.as_str(), "job ended");
        if state == JobState::Failed {
            self.fail_population(id, error.as_deref().unwrap_or("failed")).await;
        }
        self.emit(id, "state", serde_json::json!({"state": state.as_str(), "result": result, "error": error}));
        self.live.lock().expect("live jobs").remove(id);
        Ok(())
    }

    /// A store write at a job's end, retried through a database outage for up to one lease: the
    /// finished run is not thrown away for a connection sqlx is about to re-open. Past the lease
    /// another claim owns the job, and `finish_claimed` refuses this replica anyway.
    async fn outlasting_outages<T, F, Fut>(&self, what: &str, mut write: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        let deadline = Instant::now() + self.config.lease;
        loop {
            match write().await {
                Ok(value) => return Ok(value),
                Err(error) if Instant::now() < deadline => {
                    tracing::warn!(error = %format!("{error:#}"), "{what} failed; retrying");
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// The population request of a member or evaluation job.
    async fn population_of(&self, job: &JobRecord) -> Result<PopulationRequest> {
        let id = job.population_id.as_deref().ok_or_else(|| anyhow::anyhow!("job {} has no population", job.id))?;
        let record = self.store.population(id).await?.ok_or_else(|| anyhow::anyhow!("no population '{id}'"))?;
        Ok(serde_json::from_value(record.request)?)
    }

    /// What a finished population job leads to: a trained round is queued for evaluation; an
    /// evaluated round goes on the leaderboard and the orchestrator queues the member's next one.
    async fn follow_up(&self, job: &JobRecord, result: &serde_json::Value) -> Result<()> {
        let Some(population) = job.population_id.as_deref() else { return Ok(()) };
        match job.kind.as_str() {
            MEMBER => {
                let round: MemberRound = serde_json::from_value(job.request.clone())?;
                let steps = result["steps"].as_u64().unwrap_or(0) as usize;
                let record =
                    self.store.population(population).await?.ok_or_else(|| anyhow::anyhow!("no population"))?;
                self.store.insert_job_once(&record, &round.evaluation(steps)).await?;
            }
            EVALUATION => {
                let round: EvaluationRound = serde_json::from_value(job.request.clone())?;
                let filed = round.entry(result);
                self.store
                    .record_round(population, &filed, |record, board| population::decide(record, &filed, board))
                    .await?;
                if self.store.population(population).await?.is_some_and(|p| p.state == "succeeded") {
                    // No round will resume or copy a checkpoint any more: the replay and
                    // optimizer state go, the policies stay (leader and ensembles need those).
                    let folder = self.data_dir.join("populations").join(crate::store::relative_folder(population)?);
                    let freed = population::drop_run_states(&folder);
                    tracing::info!(population, freed_mb = freed as f64 / 1e6, "population ended");
                }
            }
            _ => return Ok(()),
        }
        self.wake.notify_one();
        Ok(())
    }

    /// Renews the job's lease every third of its length until aborted; a cancel requested
    /// through another replica, or a lost lease, stops the run.
    async fn keep_lease(self: Arc<Self>, id: String, cancel: Arc<AtomicBool>, lost: Arc<AtomicBool>) {
        let lease = self.config.lease;
        let mut tick = tokio::time::interval(lease / 3);
        tick.tick().await;
        loop {
            tick.tick().await;
            match self.store.renew(&id, &self.owner, lease).await {
                Ok(Lease::Held { cancel_requested }) => {
                    if cancel_requested {
                        cancel.store(true, Ordering::SeqCst);
                    }
                }
                Ok(Lease::Lost) => {
                    lost.store(true, Ordering::SeqCst);
                    cancel.store(true, Ordering::SeqCst);
                    return;
                }
                // The database is away: keep trying; if the lease lapses meanwhile, the next
                // answer says so.
                Err(error) => tracing::warn!(job = %id, error = %format!("{error:#}"), "renewing a lease failed"),
            }
        }
    }

    /// Every incumbent goes to the store (the job's curve) and the event channel.
    fn search_hooks(self: &Arc<Self>, id: &str, cancel: Arc<AtomicBool>) -> SearchHooks {
        let (manager, id, runtime) = (self.clone(), id.to_string(), tokio::runtime::Handle::current());
        SearchHooks {
            on_incumbent: Some(Arc::new(move |elapsed, objective| {
                let point = serde_json::json!({"elapsed_ms": elapsed.as_secs_f64() * 1e3, "objective": objective});
                manager.add_point(&runtime, &id, "incumbent", point);
            })),
            on_incumbent_state: None,
            cancel: Some(cancel),
        }
    }

    /// Progress (at most every 250 ms) and evaluations go to the store and the event channel;
    /// the blocking training thread writes through the runtime's handle.
    fn run_hooks(self: &Arc<Self>, id: &str, cancel: Arc<AtomicBool>) -> RunHooks {
        let runtime = tokio::runtime::Handle::current();
        let last = Arc::new(Mutex::new(Instant::now()));
        let (progress_manager, progress_id, progress_runtime) = (self.clone(), id.to_string(), runtime.clone());
        let (evaluation_manager, evaluation_id) = (self.clone(), id.to_string());
        RunHooks {
            on_progress: Some(Arc::new(move |step| {
                let mut last = last.lock().expect("progress clock");
                if last.elapsed() < Duration::from_millis(250) {
                    return;
                }
                *last = Instant::now();
                let (store, job) = (progress_manager.store.clone(), progress_id.clone());
                let _ = from_job_thread(&progress_runtime, async move { store.set_steps(&job, step as i64).await });
                progress_manager.emit(&progress_id, "progress", serde_json::json!({"steps": step}));
            })),
            on_evaluation: Some(Arc::new(move |evaluation| {
                evaluation_manager.add_point(&runtime, &evaluation_id, "evaluation", evaluation.clone());
            })),
            cancel: Some(cancel),
        }
    }

    /// Names of the files a job's folder holds (what `artifacts/{name}` serves).
    pub fn artifacts(&self, id: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.run_dir(id))
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .filter(|e| e.path().is_file())
                    .filter_map(|e| e.file_name().into_string().ok())
                    .filter(|n| !n.ends_with(".tmp"))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// Runs `write` on the runtime and waits for it from a job's blocking thread, as
/// `Handle::block_on` would; None when the runtime shut down first (a run that outlived `stop`'s
/// grace), where `block_on` panics: the task is then dropped unpolled and the channel closes.
fn from_job_thread<T: Send + 'static>(
    runtime: &tokio::runtime::Handle,
    write: impl std::future::Future<Output = T> + Send + 'static,
) -> Option<T> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    runtime.spawn(async move {
        let _ = sender.send(write.await);
    });
    receiver.blocking_recv().ok()
}

/// What a client reads of a failed job: the error's first line, without libtorch's trace (which
/// carries the server's file paths) and under 200 characters, with an id that finds the whole
/// chain in the server's log, where it goes now.
pub fn client_message(job: &str, error: &anyhow::Error) -> String {
    let error_id = uuid::Uuid::new_v4();
    tracing::error!(job = %job, error_id = %error_id, error = %format!("{error:#}"), "job failed");
    let from_torch = error.chain().any(|cause| cause.downcast_ref::<tch::TchError>().is_some());
    let summary = if from_torch {
        "the tensor library failed (out of memory or an unsupported shape)".to_string()
    } else {
        let first = error.to_string();
        let line = first.lines().next().unwrap_or("failed").trim();
        match line.char_indices().nth(200) {
            Some((cut, _)) => format!("{}...", &line[..cut]),
            None => line.to_string(),
        }
    };
    format!("{summary} (error id {error_id}; details in the server log)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_libtorch_failure_reaches_the_client_as_one_short_line_without_the_trace() {
        let trace = "[enforce fail at alloc_cpu.cpp:117] not enough memory\nException raised from /home/build/pytorch/c10/core/impl/alloc_cpu.cpp\nframe #0: c10::Error";
        let error = anyhow::Error::new(tch::TchError::Torch(trace.into())).context("building the agent");
        let message = client_message("job", &error);
        assert!(message.starts_with("the tensor library failed"), "{message}");
        assert!(!message.contains('/') && !message.contains("frame"), "{message}");
        assert!(message.contains("error id"), "{message}");
        let plain = client_message("job", &anyhow::anyhow!("env reset failed\nsecond line"));
        assert!(plain.starts_with("env reset failed (error id"), "{plain}");
    }
}

//! The learner: a thread that drains received transitions into the replay buffer and updates
//! the agent, publishing its weights every `broadcast_every` updates; HTTP handlers hand it
//! batches (`offer`) and read the weights and its status.

use super::wire::{self, Transitions};
use super::ApexConfig;
use crate::drl::agents::{Agent, OffPolicyAgent};
use crate::drl::algorithms::{self, Learner};
use crate::drl::buffer::ReplayBuffer;
use anyhow::{bail, Context, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use utoipa::ToSchema;

/// Batches waiting for the learner thread at most; more get 503 (the rollouts back off).
pub const MAX_PENDING_BATCHES: usize = 64;

/// What `GET /v1/learner` reports.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct LearnerStatus {
    #[schema(value_type = Object)]
    pub config: serde_json::Value,
    pub observation_dim: usize,
    pub action_width: usize,
    /// Updates done, and per second since the first one.
    pub updates: usize,
    pub updates_per_s: f64,
    /// Transitions received, and per second since the first batch.
    pub transitions: usize,
    pub transitions_per_s: f64,
    /// Transitions by rollout name.
    #[schema(value_type = Object)]
    pub by_rollout: BTreeMap<String, usize>,
    /// The published weights' version (updates when published).
    pub weights_version: u64,
    /// The budget of updates is spent (rollouts stop).
    pub done: bool,
    /// Mean return of the final greedy policy over `eval_episodes` episodes (once done).
    pub final_return: Option<f64>,
    pub error: Option<String>,
}

/// What the HTTP handlers and the learner thread share.
pub struct Shared {
    pub config: ApexConfig,
    inbox: Mutex<Vec<Transitions>>,
    weights: RwLock<(u64, Arc<Vec<u8>>)>,
    status: Mutex<LearnerStatus>,
    started: Mutex<(Option<Instant>, Option<Instant>)>,
}

/// Why a batch was not taken.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("{0}")]
    Invalid(String),
    #[error("the learner has {0} batches waiting; retry shortly")]
    Busy(usize),
}

impl Shared {
    pub fn status(&self) -> LearnerStatus {
        self.status.lock().expect("status").clone()
    }

    /// (version, bytes) of the latest published weights.
    pub fn weights(&self) -> (u64, Arc<Vec<u8>>) {
        let guard = self.weights.read().expect("weights");
        (guard.0, guard.1.clone())
    }

    /// Queues a rollout's batch for the learner thread.
    pub fn offer(&self, rollout: &str, batch: Transitions) -> Result<LearnerStatus, Refused> {
        let mut status = self.status.lock().expect("status");
        if (batch.obs_dim, batch.action_width) != (status.observation_dim, status.action_width) {
            return Err(Refused::Invalid(format!(
                "transitions of width {}/{}; this learner trains on observations of {} and actions of {}",
                batch.obs_dim, batch.action_width, status.observation_dim, status.action_width
            )));
        }
        let mut inbox = self.inbox.lock().expect("inbox");
        if inbox.len() >= MAX_PENDING_BATCHES {
            return Err(Refused::Busy(inbox.len()));
        }
        let first = self.started.lock().expect("clock").0.get_or_insert_with(Instant::now).elapsed();
        status.transitions += batch.len();
        *status.by_rollout.entry(rollout.to_string()).or_default() += batch.len();
        status.transitions_per_s = status.transitions as f64 / first.as_secs_f64().max(1e-9);
        inbox.push(batch);
        Ok(status.clone())
    }
}

/// Builds the learner's agent and starts its thread.
pub fn start(config: ApexConfig) -> Result<Arc<Shared>> {
    let algorithm = algorithms::find(&config.algorithm)?;
    if algorithm.multi_agent || algorithm.family != "off_policy" {
        bail!(
            "{} is not a single-agent off-policy algorithm; the learner/rollout split replays transitions",
            algorithm.name
        );
    }
    let probe = config.envs.make_configured(&config.env, 1, &serde_json::Value::Null)?;
    algorithm.check_takes(&config.env, &probe.action_space())?;
    let (d, a) = (probe.observation_dim(), probe.action_space().width());
    let shared = Arc::new(Shared {
        status: Mutex::new(LearnerStatus {
            config: serde_json::to_value(&config)?,
            observation_dim: d,
            action_width: a,
            ..Default::default()
        }),
        inbox: Mutex::new(Vec::new()),
        weights: RwLock::new((0, Arc::new(Vec::new()))),
        started: Mutex::new((None, None)),
        config,
    });
    // The agent lives on the learner's thread (tch modules are not Send); it publishes its
    // initial weights before the server answers.
    let (ready, built) = std::sync::mpsc::channel::<Result<()>>();
    let thread = shared.clone();
    std::thread::Builder::new().name("apex-learner".into()).spawn(move || {
        let agent = build(&thread.config).and_then(|(mut agent, _)| {
            *thread.weights.write().expect("weights") = (0, Arc::new(encode(agent.as_mut())?));
            Ok(agent)
        });
        let agent = match agent {
            Ok(agent) => {
                let _ = ready.send(Ok(()));
                agent
            }
            Err(error) => {
                let _ = ready.send(Err(error));
                return;
            }
        };
        if let Err(error) = learn(&thread, agent) {
            tracing::error!(error = %format!("{error:#}"), "the learner stopped");
            let mut status = thread.status.lock().expect("status");
            status.error = Some(format!("{error:#}"));
            status.done = true;
        }
    })?;
    built.recv().context("the learner thread ended before building its agent")??;
    Ok(shared)
}

/// The agent of `config` (learner and rollouts build the same one), with the env id's batch.
pub fn build(config: &ApexConfig) -> Result<(Box<dyn OffPolicyAgent>, usize)> {
    let algorithm = algorithms::find(&config.algorithm)?;
    let hyperparameters = algorithm.configure(&config.overrides())?;
    let env = config.envs.make_configured(&config.env, algorithm.num_envs, &serde_json::Value::Null)?;
    let spec = crate::drl::run::env_spec(&config.env, env.as_ref());
    match (algorithm.build)(&hyperparameters, &spec, tch::Device::Cpu, config.seed)? {
        Learner::Single(Agent::OffPolicy(agent)) => Ok((agent, algorithm.num_envs)),
        _ => bail!("{} is not an off-policy agent", algorithm.name),
    }
}

fn encode(agent: &mut dyn OffPolicyAgent) -> Result<Vec<u8>> {
    let stores = agent.var_stores();
    let named: Vec<(&str, &tch::nn::VarStore)> = stores.iter().map(|(n, s)| (*n, &**s)).collect();
    wire::encode_weights(&named)
}

fn learn(shared: &Shared, mut agent: Box<dyn OffPolicyAgent>) -> Result<()> {
    let config = &shared.config;
    let (d, a) = {
        let s = shared.status.lock().expect("status");
        (s.observation_dim, s.action_width)
    };
    let schedule = agent.schedule().clone();
    let mut buffer = ReplayBuffer::new(schedule.buffer_size, d, a, None);
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let (mut updates, mut clock) = (0, 0);
    while updates < config.updates {
        let batches = std::mem::take(&mut *shared.inbox.lock().expect("inbox"));
        for batch in &batches {
            for i in 0..batch.len() {
                let (obs, action, reward, next, terminated) = batch.row(i);
                buffer.push(obs, action, reward, next, terminated);
            }
        }
        if buffer.len() < schedule.learning_starts.max(1) {
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        agent.update(&mut buffer, &mut rng);
        updates += 1;
        // The agent's env-step schedules (DQN's target copies) run as in the single-process loop
        // at this many updates, which trains in bursts of `updates_per_train` every
        // `train_every` env steps: the rollouts' transition rate must not speed them up.
        let per_train = schedule.updates_per_train.max(1);
        if updates % per_train == 0 {
            let steps = schedule.learning_starts + updates / per_train * schedule.train_every.max(1);
            for step in clock + 1..=steps {
                agent.on_env_steps(step);
            }
            clock = steps;
        }
        let first = *shared.started.lock().expect("clock").1.get_or_insert_with(Instant::now);
        if updates % config.broadcast_every() == 0 || updates == config.updates {
            let bytes = encode(agent.as_mut())?;
            *shared.weights.write().expect("weights") = (updates as u64, Arc::new(bytes));
        }
        let mut status = shared.status.lock().expect("status");
        status.updates = updates;
        status.updates_per_s = updates as f64 / first.elapsed().as_secs_f64().max(1e-9);
        status.weights_version = shared.weights.read().expect("weights").0;
    }
    let episodes = config.eval_episodes.unwrap_or(20);
    let seed = crate::drl::run::evaluation_seed(config.seed, 0);
    let null = serde_json::Value::Null;
    let (mean, _) =
        crate::drl::run::evaluate(&config.env, &null, episodes, seed, tch::Device::Cpu, &config.envs, &mut |o| {
            agent.act(o, false)
        })?;
    let mut status = shared.status.lock().expect("status");
    status.final_return = Some(mean);
    status.done = true;
    Ok(())
}

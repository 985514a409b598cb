//! Any Gymnasium environment as a `VecEnv`: `gymnasium:<id>` (MuJoCo's `Hopper-v5`, a user's
//! `my_package.envs:Trading-v0`, PyBullet's `pybullet_envs_gymnasium:HopperBulletEnv-v0`). A
//! pool of Python worker processes each steps a contiguous slice of the batch; observations and
//! actions cross the pipes as raw little-endian `f32` rows, one frame per worker per step.
//!
//! The contract is the native envs': env i resets from a seed derived from (seed, i), the next
//! episodes continue its stream, a finished env auto-resets in the same step with its last
//! observation in `final_observations`, terminated and truncated stay apart (gymnasium's
//! `TimeLimit` sets truncated). Spaces: observations of any space gymnasium can flatten (Box;
//! Discrete and MultiDiscrete one-hot; Dict and Tuple concatenated in the space's order); actions
//! Box (bounded, each action clipped to it before the env sees it, as SB3's rollout loop does),
//! Discrete, or MultiDiscrete taken as one Discrete over the joint actions (mixed radix, last
//! component fastest; at most 65,536).
//!
//! Faults: a worker that exits or gives no answer within the step timeout is killed and
//! restarted; its envs' episodes end as truncated (their last observation as the final one), the
//! run continues, and the restart is logged and counted (`rlsolver_gymnasium_worker_restarts`).

mod worker;

use super::{ActionSpace, StepBatch, VecEnv};
use anyhow::{bail, Context, Result};
use serde_json::json;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use worker::Worker;

/// The env-id prefix that selects the bridge.
pub const PREFIX: &str = "gymnasium:";
/// Restarts of a failed worker before the run gives up.
const RESTART_ATTEMPTS: usize = 3;

/// How the bridge runs Python (`serve`/`train` flags `--python`, `--bridge-workers`,
/// `--bridge-step-timeout-s`). It travels with each training request and each env made
/// (`Envs::make_configured`); clones share one restart counter.
#[derive(Debug, Clone)]
pub struct BridgeConfig {
    /// The interpreter with gymnasium and the simulators (`make simulators` fills the project's
    /// `.venv`).
    pub python: PathBuf,
    /// Worker processes per batch of envs at most (each steps batch / workers envs).
    pub max_workers: usize,
    /// Envs in one bridged batch at most.
    pub max_envs: usize,
    /// A worker that takes longer for one step (or reset) is restarted.
    pub step_timeout: Duration,
    /// Time for a worker to import gymnasium and make its envs.
    pub start_timeout: Duration,
    /// Workers restarted after a crash or a timeout by the envs made with this config (and its
    /// clones): what `/metrics` reports as `rlsolver_gymnasium_worker_restarts`.
    pub restarts: Arc<AtomicU64>,
}

impl Default for BridgeConfig {
    fn default() -> Self {
        let venv = PathBuf::from(".venv/bin/python");
        let python = std::env::var_os("RLSOLVER_PYTHON").map(PathBuf::from).unwrap_or_else(|| {
            if venv.exists() {
                venv
            } else {
                PathBuf::from("python3")
            }
        });
        BridgeConfig {
            python,
            max_workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            max_envs: 1024,
            step_timeout: Duration::from_secs(30),
            start_timeout: Duration::from_secs(120),
            restarts: Arc::default(),
        }
    }
}

impl BridgeConfig {
    /// Workers restarted after a crash or a timeout (see `restarts`).
    pub fn worker_restarts(&self) -> u64 {
        self.restarts.load(Ordering::Relaxed)
    }
}

/// The gymnasium id of a bridged env id, if it is one.
pub fn gymnasium_id(env_id: &str) -> Option<&str> {
    env_id.strip_prefix(PREFIX)
}

/// Env i's reset seed in a batch reset with `seed`; `generation` counts restarts and resumes,
/// so that a replacement worker's episodes do not repeat the ones it replaces.
pub fn env_seed(seed: u64, generation: u64, i: usize) -> u64 {
    // SplitMix64's finalizer over the three inputs.
    let mut z = seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ generation.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) >> 1
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

/// What a worker says about its env after making it.
#[derive(Debug, Clone, PartialEq)]
struct Spaces {
    observation_dim: usize,
    action_space: ActionSpace,
}

fn parse_header(header: &serde_json::Value) -> Result<Spaces> {
    let action = &header["action_space"];
    let action_space = match action["kind"].as_str() {
        Some("discrete") => ActionSpace::Discrete { n: action["n"].as_u64().context("action n")? as usize },
        Some("continuous") => {
            let list = |k: &str| -> Result<Vec<f32>> {
                Ok(serde_json::from_value::<Vec<f64>>(action[k].clone())?.into_iter().map(|v| v as f32).collect())
            };
            ActionSpace::Continuous { low: list("low")?, high: list("high")? }
        }
        _ => bail!("the worker described no action space"),
    };
    Ok(Spaces {
        observation_dim: header["observation_dim"].as_u64().context("observation_dim")? as usize,
        action_space,
    })
}

pub struct GymnasiumVecEnv {
    id: String,
    kwargs: serde_json::Value,
    config: BridgeConfig,
    workers: Vec<Worker>,
    slices: Vec<Range<usize>>,
    spaces: Spaces,
    /// Each env's latest observation (the final one of an episode a restart cuts).
    last_obs: Vec<f32>,
    seed: u64,
    generation: u64,
}

impl GymnasiumVecEnv {
    /// `num_envs` copies of gymnasium's `id` made with `kwargs` (a JSON object or null), over
    /// at most `config`'s number of workers.
    pub fn new(id: &str, num_envs: usize, kwargs: &serde_json::Value, config: &BridgeConfig) -> Result<Self> {
        let config = config.clone();
        if num_envs == 0 || num_envs > config.max_envs {
            bail!("{num_envs} envs: a bridged batch takes 1..={}", config.max_envs);
        }
        if !(kwargs.is_null() || kwargs.is_object()) {
            bail!("env_config: gymnasium.make's keyword arguments, as a JSON object");
        }
        let workers = num_envs.min(config.max_workers.max(1));
        let slices: Vec<Range<usize>> =
            (0..workers).map(|w| (w * num_envs / workers)..((w + 1) * num_envs / workers)).collect();
        // All workers import and build at once; the answers are read after.
        let mut started = Vec::with_capacity(workers);
        for slice in &slices {
            started.push(Worker::spawn(&config.python, &json!({"id": id, "kwargs": kwargs, "num_envs": slice.len()}))?);
        }
        let mut spaces = None;
        for worker in &mut started {
            let these = parse_header(&worker.header(config.start_timeout)?)?;
            if spaces.as_ref().is_some_and(|s| *s != these) {
                bail!("the workers' copies of {id} have different spaces");
            }
            spaces = Some(these);
        }
        let spaces = spaces.context("no worker")?;
        Ok(GymnasiumVecEnv {
            id: id.into(),
            kwargs: kwargs.clone(),
            last_obs: vec![0.0; num_envs * spaces.observation_dim],
            config,
            workers: started,
            slices,
            spaces,
            seed: 0,
            generation: 0,
        })
    }

    /// Worker process ids (tests kill one to check the restart).
    pub fn worker_pids(&self) -> Vec<u32> {
        self.workers.iter().map(Worker::pid).collect()
    }

    fn reset_frame(&self, w: usize) -> Vec<u8> {
        let mut frame = vec![b'R'];
        for i in self.slices[w].clone() {
            frame.extend_from_slice(&env_seed(self.seed, self.generation, i).to_le_bytes());
        }
        frame
    }

    /// Replaces worker `w` after `fault` and returns its envs' fresh observations.
    fn restart(&mut self, w: usize, fault: &worker::Fault) -> Vec<f32> {
        self.config.restarts.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(env = %self.id, worker = w, %fault, "gymnasium worker restarted; its episodes end truncated");
        let init = json!({"id": self.id, "kwargs": self.kwargs, "num_envs": self.slices[w].len()});
        let mut last_error = String::new();
        for _ in 0..RESTART_ATTEMPTS {
            self.generation += 1;
            let started = Worker::spawn(&self.config.python, &init).and_then(|mut worker| {
                worker.header(self.config.start_timeout)?;
                Ok(worker)
            });
            match started {
                Ok(worker) => {
                    // Dropping the old one kills it (a hung process included).
                    self.workers[w] = worker;
                    let frame = self.reset_frame(w);
                    if self.workers[w].send(&frame).is_ok() {
                        if let Ok(bytes) = self.workers[w].receive(self.config.step_timeout) {
                            return floats(&bytes);
                        }
                    }
                    last_error = "the restarted worker did not reset".into();
                }
                Err(error) => last_error = format!("{error:#}"),
            }
        }
        // VecEnv::step has no error path; the job runner turns this into a failed job.
        panic!("gymnasium bridge: worker {w} of {} could not be restarted: {last_error}", self.id);
    }
}

impl VecEnv for GymnasiumVecEnv {
    fn num_envs(&self) -> usize {
        self.slices.last().map_or(0, |s| s.end)
    }

    fn observation_dim(&self) -> usize {
        self.spaces.observation_dim
    }

    fn action_space(&self) -> ActionSpace {
        self.spaces.action_space.clone()
    }

    fn reset(&mut self, seed: u64) -> Vec<f32> {
        (self.seed, self.generation) = (seed, 0);
        for w in 0..self.workers.len() {
            let frame = self.reset_frame(w);
            if let Err(error) = self.workers[w].send(&frame) {
                tracing::debug!(%error, "reset frame not sent; the receive restarts the worker");
            }
        }
        let dim = self.spaces.observation_dim;
        let mut obs = vec![0.0; self.num_envs() * dim];
        let deadline = Instant::now() + self.config.step_timeout;
        for w in 0..self.workers.len() {
            let rows = match self.workers[w].receive(deadline.saturating_duration_since(Instant::now())) {
                Ok(bytes) => floats(&bytes),
                Err(fault) => self.restart(w, &fault),
            };
            let range = self.slices[w].start * dim..self.slices[w].end * dim;
            obs[range].copy_from_slice(&rows);
        }
        self.last_obs.clone_from(&obs);
        obs
    }

    fn step(&mut self, actions: &[f32]) -> StepBatch {
        let (b, dim, width) = (self.num_envs(), self.spaces.observation_dim, self.spaces.action_space.width());
        assert_eq!(actions.len(), b * width, "actions: {b} rows of {width}");
        let mut sent = vec![true; self.workers.len()];
        for (w, slice) in self.slices.iter().enumerate() {
            let mut frame = Vec::with_capacity(1 + slice.len() * width * 4);
            frame.push(b'S');
            for a in &actions[slice.start * width..slice.end * width] {
                frame.extend_from_slice(&a.to_le_bytes());
            }
            sent[w] = self.workers[w].send(&frame).is_ok();
        }
        let mut batch = StepBatch::zeroed(b, dim);
        // One deadline for the batch: workers hung together cost one timeout, not one each.
        let deadline = Instant::now() + self.config.step_timeout;
        for w in 0..self.workers.len() {
            let slice = self.slices[w].clone();
            let (n, rows) = (slice.len(), slice.start * dim..slice.end * dim);
            let answer = if sent[w] {
                self.workers[w].receive(deadline.saturating_duration_since(Instant::now()))
            } else {
                Err(worker::Fault::Exited("its pipe is closed".into()))
            };
            let expected = n * dim * 8 + n * 4 + 2 * n;
            match answer {
                Ok(bytes) if bytes.len() == expected => {
                    let (obs, rest) = bytes.split_at(n * dim * 4);
                    let (rewards, rest) = rest.split_at(n * 4);
                    let (flags, fin) = rest.split_at(2 * n);
                    batch.observations[rows.clone()].copy_from_slice(&floats(obs));
                    batch.rewards[slice.clone()].copy_from_slice(&floats(rewards));
                    for j in 0..n {
                        batch.terminated[slice.start + j] = flags[j] != 0;
                        batch.truncated[slice.start + j] = flags[n + j] != 0;
                    }
                    batch.final_observations[rows].copy_from_slice(&floats(fin));
                }
                answer => {
                    let fault = match answer {
                        Ok(bytes) => {
                            worker::Fault::Exited(format!("a {}-byte answer, {expected} expected", bytes.len()))
                        }
                        Err(fault) => fault,
                    };
                    let fresh = self.restart(w, &fault);
                    batch.observations[rows.clone()].copy_from_slice(&fresh);
                    batch.final_observations[rows.clone()].copy_from_slice(&self.last_obs[rows]);
                    batch.truncated[slice].iter_mut().for_each(|t| *t = true);
                }
            }
        }
        self.last_obs.clone_from(&batch.observations);
        batch
    }

    fn resumes_mid_episode(&self) -> bool {
        false
    }

    /// A simulator's state cannot in general be saved; a resumed run starts fresh episodes
    /// (`resumes_mid_episode`) from a seed of its own, so only the env id is kept.
    fn save_state(&self) -> Result<serde_json::Value> {
        Ok(json!({"gymnasium": self.id}))
    }

    fn load_state(&mut self, state: &serde_json::Value) -> Result<()> {
        anyhow::ensure!(state["gymnasium"].as_str() == Some(self.id.as_str()), "the checkpoint is not of {}", self.id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_seeds_differ_by_env_and_generation() {
        let seeds: std::collections::HashSet<u64> =
            (0..64).flat_map(|i| (0..4).map(move |g| env_seed(7, g, i))).collect();
        assert_eq!(seeds.len(), 256);
        assert_eq!(env_seed(7, 0, 3), env_seed(7, 0, 3));
        assert!(env_seed(7, 0, 3) < 1 << 63, "numpy takes it as a non-negative int");
    }
}

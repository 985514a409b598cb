//! `rlsolver bench population`: population-based training against independent runs with the
//! same env steps. For each task and seed, a PBT population of 8 members and 8
//! independent runs that start from the same hyperparameter draws and seeds (the population
//! without its exploit/explore steps) train on the job queue of an embedded store; then every
//! final checkpoint is scored on the same fresh episodes. Reported: the population's best and
//! median member against the independent runs' median and best, over seeds (median and worst),
//! and the wall time of one population with 1 and 2 job workers.

use anyhow::{bail, Context, Result};
use rlsolver::jobs::population::{member_seed, PopulationRequest, Scheme};
use rlsolver::jobs::training::TrainingRequest;
use rlsolver::jobs::{JobManager, JobsConfig, TRAINING};
use rlsolver::models::ModelRegistry;
use rlsolver::problems::{Limits, ProblemSet, SolveContext};
use rlsolver::store::{relative_folder, Store};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct PopulationBenchConfig {
    /// Seeds of the whole experiment (population and independent runs).
    pub seeds: Vec<u64>,
    /// Job workers of the quality runs.
    pub workers: usize,
    /// Worker counts of the wall-time table (one population of the first seed each).
    pub timing_workers: Vec<usize>,
    /// Only these tasks (pendulum, spread; empty: both).
    pub only: Vec<String>,
    /// Scratch folder for the stores and checkpoints (removed afterwards).
    pub scratch: PathBuf,
}

impl Default for PopulationBenchConfig {
    fn default() -> Self {
        PopulationBenchConfig {
            seeds: vec![0, 1, 2],
            workers: 2,
            timing_workers: vec![1, 2],
            only: Vec::new(),
            scratch: std::env::temp_dir().join(format!("rlsolver-bench-population-{}", std::process::id())),
        }
    }
}

/// One task: an algorithm on an env, its budget and what PBT explores.
struct Task {
    name: &'static str,
    algorithm: &'static str,
    env: &'static str,
    members: usize,
    steps_per_member: usize,
    interval: usize,
    explore: fn() -> Value,
    fixed: fn() -> Value,
    /// Episodes of the final scoring (the same seed for every checkpoint of a task and seed).
    final_episodes: usize,
}

const TASKS: &[Task] = &[
    Task {
        name: "pendulum",
        algorithm: "sac",
        env: "Pendulum-v1",
        members: 8,
        steps_per_member: 6_000,
        interval: 1_500,
        explore: || json!({"learning_rate": {"min": 1e-4, "max": 3e-3, "log": true}, "gamma": {"min": 0.9, "max": 0.999}}),
        fixed: || json!({}),
        final_episodes: 20,
    },
    Task {
        name: "spread",
        algorithm: "maddpg",
        env: "simple_spread",
        members: 8,
        steps_per_member: 100_000,
        interval: 25_000,
        explore: || {
            json!({"actor_learning_rate": {"min": 1e-3, "max": 3e-2, "log": true},
                   "critic_learning_rate": {"min": 1e-3, "max": 3e-2, "log": true}})
        },
        fixed: || json!({"learning_starts": 5_000}),
        final_episodes: 64,
    },
];

impl Task {
    fn request(&self, seed: u64) -> Result<PopulationRequest> {
        Ok(serde_json::from_value(json!({
            "algorithm": self.algorithm, "env": self.env, "scheme": Scheme::Pbt, "size": self.members,
            "total_steps": self.steps_per_member * self.members, "interval_steps": self.interval,
            "seed": seed, "explore": (self.explore)(), "hyperparameters": (self.fixed)(), "eval_episodes": 10,
        }))?)
    }
}

/// A job service on its own embedded store in `dir`, with `workers` job workers.
async fn service(dir: &Path, workers: usize) -> Result<Arc<JobManager>> {
    let _ = std::fs::remove_dir_all(dir);
    let store = Store::open(dir).await?;
    let solve = SolveContext {
        problems: ProblemSet::builtin(),
        models: Arc::new(ModelRegistry::empty(rlsolver::problems::policy_loaders)),
        limits: Limits::default(),
    };
    let config = JobsConfig { workers, max_queued: 64, ..JobsConfig::default() };
    JobManager::start(store, dir, config, solve).await
}

/// Runs the population to its end; (final checkpoint folders of its members, wall seconds).
async fn population(dir: &Path, workers: usize, request: &PopulationRequest) -> Result<(Vec<PathBuf>, f64)> {
    let jobs = service(dir, workers).await?;
    let started = Instant::now();
    let record = jobs.submit_population(request, None).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = jobs.store().population(&record.id).await?.context("the population")?;
        match now.state.as_str() {
            "running" => continue,
            "succeeded" => break,
            other => bail!("the population ended {other}: {:?}", now.error),
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let board = jobs.store().entries(&record.id).await?;
    let latest = rlsolver::jobs::population::latest_per_member(&board);
    let dirs = latest.iter().map(|e| Ok(dir.join(relative_folder(&e.checkpoint)?))).collect::<Result<Vec<_>>>()?;
    Ok((dirs, wall))
}

/// The population's members trained alone: same draws, seeds and steps, no exploit/explore.
async fn independent(dir: &Path, workers: usize, request: &PopulationRequest) -> Result<(Vec<PathBuf>, f64)> {
    let jobs = service(dir, workers).await?;
    let started = Instant::now();
    let mut ids = Vec::new();
    for member in 0..request.size {
        let run = TrainingRequest {
            algorithm: request.algorithm.clone(),
            env: request.env.clone(),
            total_steps: request.rounds_per_member() * request.interval_steps,
            seed: member_seed(request.seed, member),
            target_return: None,
            hyperparameters: Some(request.initial_hyperparameters(member)),
            eval_every: Some(request.interval_steps),
            eval_episodes: Some(1),
            env_config: None,
        };
        ids.push(jobs.submit(TRAINING, &run, None).await.map_err(|e| anyhow::anyhow!("{e}"))?.id);
    }
    for id in &ids {
        loop {
            let job = jobs.store().job(id).await?.context("the job")?;
            if job.state.is_terminal() {
                anyhow::ensure!(job.state.as_str() == "succeeded", "run {id} ended {:?}: {:?}", job.state, job.error);
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let wall = started.elapsed().as_secs_f64();
    Ok((ids.iter().map(|id| jobs.run_dir(id)).collect(), wall))
}

/// Mean return of each checkpoint over the same `episodes` fresh episodes.
fn final_scores(dirs: &[PathBuf], episodes: usize, seed: u64) -> Result<Vec<f64>> {
    dirs.iter()
        .map(|dir| {
            Ok(rlsolver::drl::run::score_checkpoint(
                dir,
                episodes,
                seed,
                &rlsolver::problems::envs(Default::default()),
            )?
            .0)
        })
        .collect()
}

fn sorted(mut values: Vec<f64>) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    values
}

/// Runs `work` on a runtime of its own: dropping it stops that run's job workers.
fn on_runtime<T>(work: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    tokio::runtime::Runtime::new()?.block_on(work)
}

pub fn run_population(config: &PopulationBenchConfig) -> Result<String> {
    let tasks: Vec<&Task> =
        TASKS.iter().filter(|t| config.only.is_empty() || config.only.iter().any(|o| o == t.name)).collect();
    let mut report = String::new();
    writeln!(report, "# Population-based training against independent runs\n")?;
    writeln!(
        report,
        "`rlsolver bench population --seeds {} --workers {}` on this machine ({} CPU threads). Each seed: a PBT \
         population (truncation selection, quantile 0.25, explore x0.8/x1.2 or resample with p 0.25) and the same \
         members trained alone (same hyperparameter draws, seeds and env steps), every final checkpoint then scored \
         on the same fresh episodes. Independent runs are the population without exploit and explore: the \
         question is what PBT's selection adds at equal env steps.\n",
        config.seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(","),
        config.workers,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    )?;
    for task in &tasks {
        let probe = task.request(0)?;
        writeln!(
            report,
            "## {} {} ({} members x {} env steps, rounds of {}; explored: {})\n",
            task.algorithm,
            task.env,
            task.members,
            task.steps_per_member,
            task.interval,
            probe.explore.keys().cloned().collect::<Vec<_>>().join(", ")
        )?;
        writeln!(report, "Final return over {} fresh episodes per checkpoint.\n", task.final_episodes)?;
        writeln!(
            report,
            "| seed | PBT best | PBT median | independent best | independent median | PBT best - independent median | PBT wall s | independent wall s |"
        )?;
        writeln!(report, "|---|---|---|---|---|---|---|---|")?;
        let mut gains = Vec::new();
        let mut summary: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for &seed in &config.seeds {
            let request = task.request(seed)?;
            let dir = config.scratch.join(format!("{}-{seed}", task.name));
            let (pbt_dirs, pbt_wall) = on_runtime(population(&dir.join("pbt"), config.workers, &request))?;
            let (solo_dirs, solo_wall) = on_runtime(independent(&dir.join("independent"), config.workers, &request))?;
            let final_seed = rlsolver::drl::run::evaluation_seed(seed ^ 0xF1_4A_10_00, 0);
            let pbt = sorted(final_scores(&pbt_dirs, task.final_episodes, final_seed)?);
            let solo = sorted(final_scores(&solo_dirs, task.final_episodes, final_seed)?);
            let (pbt_best, pbt_median) = (pbt[pbt.len() - 1], super::median(&pbt));
            let (solo_best, solo_median) = (solo[solo.len() - 1], super::median(&solo));
            gains.push(pbt_best - solo_median);
            for (key, value) in [
                ("pbt_best", pbt_best),
                ("pbt_median", pbt_median),
                ("solo_best", solo_best),
                ("solo_median", solo_median),
            ] {
                summary.entry(key).or_default().push(value);
            }
            writeln!(
                report,
                "| {seed} | {pbt_best:.1} | {pbt_median:.1} | {solo_best:.1} | {solo_median:.1} | {:+.1} | {pbt_wall:.0} | {solo_wall:.0} |",
                pbt_best - solo_median
            )?;
            tracing::info!(task = task.name, seed, pbt_best, pbt_median, solo_best, solo_median, "population bench");
            let _ = std::fs::remove_dir_all(&dir);
        }
        let cell = |values: &mut Vec<f64>| {
            let (median, worst) = super::median_and_worst(values, true);
            format!("{median:.1} ({worst:.1})")
        };
        writeln!(
            report,
            "| median (worst) | {} | {} | {} | {} | {} | | |\n",
            cell(summary.get_mut("pbt_best").expect("rows")),
            cell(summary.get_mut("pbt_median").expect("rows")),
            cell(summary.get_mut("solo_best").expect("rows")),
            cell(summary.get_mut("solo_median").expect("rows")),
            cell(&mut gains),
        )?;
        if !config.timing_workers.is_empty() {
            writeln!(report, "Wall time of one population (seed {}) by job workers:\n", config.seeds[0])?;
            writeln!(report, "| workers | wall s | speed-up |")?;
            writeln!(report, "|---|---|---|")?;
            let mut first = None;
            for &workers in &config.timing_workers {
                let request = task.request(config.seeds[0])?;
                let dir = config.scratch.join(format!("{}-timing-{workers}", task.name));
                let (_, wall) = on_runtime(population(&dir, workers, &request))?;
                let base = *first.get_or_insert(wall);
                writeln!(report, "| {workers} | {wall:.0} | {:.2} |", base / wall)?;
                let _ = std::fs::remove_dir_all(&dir);
            }
            writeln!(report)?;
        }
    }
    let _ = std::fs::remove_dir_all(&config.scratch);
    Ok(report)
}

/// `rlsolver bench population`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_population(&PopulationBenchConfig {
        seeds: args.seeds.clone(),
        workers: args.workers,
        timing_workers: args.timing_workers.clone(),
        only: args.only.clone(),
        ..PopulationBenchConfig::default()
    })
}

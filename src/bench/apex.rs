//! `rlsolver bench apex`: the learner/rollout split on this machine. For each count
//! of rollout processes, a learner replica (in this process) trains DQN on CartPole-v1 for a
//! fixed number of updates while that many `serve --role rollout` processes of this binary feed
//! it; reported: env steps (transitions) per second, the learner's updates per second, and the
//! final greedy return. Next to it, the single-process run with the same updates (its env steps
//! set by the algorithm's update ratio), on the same seeds.

use anyhow::{Context, Result};
use rlsolver::api::state::{Role, ServerConfig};
use rlsolver::drl::apex::ApexConfig;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct ApexBenchConfig {
    /// Rollout process counts, one row each.
    pub rollouts: Vec<usize>,
    pub seeds: Vec<u64>,
    /// Learner updates per run.
    pub updates: usize,
}

impl Default for ApexBenchConfig {
    fn default() -> Self {
        ApexBenchConfig { rollouts: vec![1, 2, 4], seeds: vec![0, 1, 2], updates: 10_000 }
    }
}

/// One run's (env steps/s, learner updates/s, final return, wall s).
type Measured = (f64, f64, f64, f64);

const ALGORITHM: &str = "dqn";
const ENV: &str = "CartPole-v1";
const LEARNING_STARTS: usize = 1_000;
const EVAL_EPISODES: usize = 20;

/// One learner with `rollouts` rollout processes: (transitions/s, updates/s, final return, wall s).
fn split_run(rollouts: usize, seed: u64, updates: usize) -> Result<Measured> {
    let learn: ApexConfig = serde_json::from_value(json!({
        "algorithm": ALGORITHM, "env": ENV, "seed": seed, "updates": updates, "eval_episodes": EVAL_EPISODES,
        "hyperparameters": {"learning_starts": LEARNING_STARTS},
    }))?;
    let data = std::env::temp_dir().join(format!("rlsolver-bench-apex-{}-{rollouts}-{seed}", std::process::id()));
    let config = ServerConfig {
        role: Role::Learner,
        learn: Some(learn),
        data_dir: data.join("learner"),
        ..ServerConfig::default()
    };
    let (address, shutdown) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || -> Result<()> {
        tokio::runtime::Runtime::new()?.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            address.send(listener.local_addr()?)?;
            rlsolver::api::serve_until(listener, config, async move {
                let _ = stopped.await;
            })
            .await
        })
    });
    let base = format!("http://{}", shutdown.recv().context("the learner did not start")?);
    let started = Instant::now();
    let exe = std::env::current_exe()?;
    let mut children = Vec::new();
    for r in 0..rollouts {
        children.push(
            std::process::Command::new(&exe)
                .args(["serve", "--port", "0", "--role", "rollout", "--learner-url", &base])
                .args(["--replica", &format!("rollout-{r}")])
                .arg("--data-dir")
                .arg(data.join(format!("rollout-{r}")))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()?,
        );
    }
    let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(30)).build()?;
    let status: Value = loop {
        std::thread::sleep(Duration::from_millis(250));
        let status: Value = client.get(format!("{base}/v1/learner")).send()?.json()?;
        if status["done"] == true {
            break status;
        }
    };
    let wall = started.elapsed().as_secs_f64();
    for mut child in children {
        let _ = child.wait();
    }
    let _ = stop.send(());
    let _ = server.join();
    let _ = std::fs::remove_dir_all(&data);
    if let Some(error) = status["error"].as_str() {
        anyhow::bail!("the learner failed: {error}");
    }
    let number = |k: &str| status[k].as_f64().unwrap_or(f64::NAN);
    Ok((number("transitions_per_s"), number("updates_per_s"), number("final_return"), wall))
}

/// The single-process run with `updates` updates: (env steps/s, updates/s, final return, wall s).
fn single_run(seed: u64, updates: usize) -> Result<Measured> {
    let algorithm = rlsolver::drl::algorithms::find(ALGORITHM)?;
    let hyperparameters = algorithm.configure(&json!({"learning_starts": LEARNING_STARTS}))?;
    let (train_every, per_train) = (
        hyperparameters["train_every"].as_u64().unwrap_or(1) as usize,
        hyperparameters["updates_per_train"].as_u64().unwrap_or(1) as usize,
    );
    // Updates come in bursts of `per_train` every `train_every` env steps after the warm-up.
    let steps = LEARNING_STARTS + updates.div_ceil(per_train) * train_every;
    let mut config = rlsolver::drl::run::TrainConfig::new(ALGORITHM, ENV, steps, seed);
    config.overrides = json!({"learning_starts": LEARNING_STARTS});
    config.eval_every = steps;
    config.eval_episodes = 1;
    let started = Instant::now();
    let out = std::env::temp_dir().join(format!("rlsolver-bench-apex-single-{}-{seed}", std::process::id()));
    config.out_dir = Some(out.clone());
    let outcome = rlsolver::drl::run::train(&config)?;
    let wall = started.elapsed().as_secs_f64();
    let eval_seed = rlsolver::drl::run::evaluation_seed(seed, 0);
    let (ret, _) = rlsolver::drl::run::score_checkpoint(
        &out,
        EVAL_EPISODES,
        eval_seed,
        &rlsolver::problems::envs(Default::default()),
    )?;
    let _ = std::fs::remove_dir_all(&out);
    let done_updates = (outcome.steps.saturating_sub(LEARNING_STARTS) / train_every) * per_train;
    Ok((outcome.steps as f64 / outcome.train_s, done_updates as f64 / outcome.train_s, ret, wall))
}

pub fn run_apex(config: &ApexBenchConfig) -> Result<String> {
    let mut report = String::new();
    writeln!(report, "# Learner/rollout split (Ape-X) on this machine\n")?;
    writeln!(
        report,
        "`rlsolver bench apex --seeds {}` ({} CPU threads): {ALGORITHM} on {ENV}, {} learner updates, learning \
         starts after {LEARNING_STARTS} transitions; final return = greedy policy over {EVAL_EPISODES} episodes \
         (the learner's evaluation seed). Env steps/s: transitions the learner received per second (split), or the \
         training loop's env steps per second (single process). Medians over seeds, worst in parentheses.\n",
        config.seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(","),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        config.updates
    )?;
    writeln!(report, "| setup | env steps/s | learner updates/s | final return | wall s |")?;
    writeln!(report, "|---|---|---|---|---|")?;
    let cell = |values: &mut Vec<f64>, higher_is_better: bool| {
        let (median, worst) = super::median_and_worst(values, higher_is_better);
        format!("{median:.0} ({worst:.0})")
    };
    let mut rows: Vec<(String, Vec<Measured>)> = Vec::new();
    rows.push((
        "single process".into(),
        config.seeds.iter().map(|&s| single_run(s, config.updates)).collect::<Result<Vec<_>>>()?,
    ));
    for &r in &config.rollouts {
        let runs = config.seeds.iter().map(|&s| split_run(r, s, config.updates)).collect::<Result<Vec<_>>>()?;
        rows.push((format!("learner + {r} rollout process{}", if r == 1 { "" } else { "es" }), runs));
    }
    for (name, runs) in rows {
        let column = |f: fn(&Measured) -> f64| runs.iter().map(f).collect::<Vec<f64>>();
        writeln!(
            report,
            "| {name} | {} | {} | {} | {} |",
            cell(&mut column(|r| r.0), true),
            cell(&mut column(|r| r.1), true),
            cell(&mut column(|r| r.2), true),
            cell(&mut column(|r| r.3), false)
        )?;
    }
    Ok(report)
}

/// `rlsolver bench apex`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    let defaults = ApexBenchConfig::default();
    run_apex(&ApexBenchConfig {
        rollouts: if args.rollouts.is_empty() { defaults.rollouts } else { args.rollouts.clone() },
        seeds: args.seeds.clone(),
        updates: args.updates.unwrap_or(defaults.updates),
    })
}

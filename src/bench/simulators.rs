//! `rlsolver bench simulators`: our algorithms trained on real simulators through the Gymnasium
//! bridge against Stable-Baselines3 on the same tasks, in the same command
//! (`benches/peers/sb3_simulators_peer.py` gets the task table below as JSON, so both sides
//! run the same hyperparameters, budgets, evaluation schedule and seeds). Reported per task: the
//! final evaluation's mean return (10 deterministic episodes on fresh starts), median and worst
//! over seeds, and the training seconds (evaluation left out), median over seeds.
//!
//! The hyperparameters are the MuJoCo-class settings of RL Baselines3 Zoo (SAC: Haarnoja et al.
//! 2018's 3e-4 / 256 / 1e6 buffer; TD3: Fujimoto et al. 2018's 1e-3 / [400, 300] / noise 0.1),
//! one row per algorithm for every task of the class, none keyed to an env.

use super::drl::median;
use super::median_and_worst;
use anyhow::{Context, Result};
use rlsolver::drl::run::{train, TrainConfig};
use serde::Deserialize;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One task at its full budget.
#[derive(Debug, Clone)]
pub struct SimulatorTask {
    pub algorithm: &'static str,
    /// Gymnasium id (`module:Id` registers the module's envs first).
    pub env: &'static str,
    pub simulator: &'static str,
    pub budget: usize,
}

/// The tasks: MuJoCo SAC and TD3 on InvertedPendulum, PPO on InvertedDoublePendulum, SAC, TD3
/// and PPO on Hopper, HalfCheetah and Walker2d (the off-policy ones at 300k steps, PPO at 1M, as
/// the papers' learning curves are read), and SAC on PyBullet's Hopper.
pub const TASKS: &[SimulatorTask] = &[
    SimulatorTask { algorithm: "sac", env: "InvertedPendulum-v5", simulator: "MuJoCo", budget: 20_000 },
    SimulatorTask { algorithm: "td3", env: "InvertedPendulum-v5", simulator: "MuJoCo", budget: 20_000 },
    SimulatorTask { algorithm: "ppo", env: "InvertedDoublePendulum-v5", simulator: "MuJoCo", budget: 200_000 },
    SimulatorTask { algorithm: "sac", env: "Hopper-v5", simulator: "MuJoCo", budget: 300_000 },
    SimulatorTask { algorithm: "td3", env: "Hopper-v5", simulator: "MuJoCo", budget: 300_000 },
    SimulatorTask { algorithm: "ppo", env: "Hopper-v5", simulator: "MuJoCo", budget: 1_000_000 },
    SimulatorTask { algorithm: "sac", env: "HalfCheetah-v5", simulator: "MuJoCo", budget: 300_000 },
    SimulatorTask { algorithm: "td3", env: "HalfCheetah-v5", simulator: "MuJoCo", budget: 300_000 },
    SimulatorTask { algorithm: "ppo", env: "HalfCheetah-v5", simulator: "MuJoCo", budget: 1_000_000 },
    SimulatorTask { algorithm: "sac", env: "Walker2d-v5", simulator: "MuJoCo", budget: 300_000 },
    SimulatorTask { algorithm: "td3", env: "Walker2d-v5", simulator: "MuJoCo", budget: 300_000 },
    SimulatorTask { algorithm: "ppo", env: "Walker2d-v5", simulator: "MuJoCo", budget: 1_000_000 },
    SimulatorTask {
        algorithm: "sac",
        env: "pybullet_envs_gymnasium:HopperBulletEnv-v0",
        simulator: "PyBullet",
        budget: 300_000,
    },
];

/// SB3's PPO runs this many envs, as ours (`ppo`'s `num_envs`).
const PPO_ENVS: usize = 4;
const EVALUATIONS: usize = 10;
const EVAL_EPISODES: usize = 10;

/// (our overrides, SB3's keyword arguments, normalize observations) of `algorithm` at `budget`:
/// the same settings written in each library's names.
pub fn hyperparameters(algorithm: &str, budget: usize) -> (Value, Value, bool) {
    // The zoo's 10,000 random warm-up steps, capped at a tenth of a short budget.
    let warmup = (budget / 10).min(10_000);
    match algorithm {
        "sac" => (
            json!({"learning_rate": 3e-4, "buffer_size": 1_000_000, "learning_starts": warmup, "batch_size": 256,
                   "tau": 0.005, "gamma": 0.99, "hidden": [256, 256], "initial_alpha": 1.0}),
            json!({"learning_rate": 3e-4, "buffer_size": 1_000_000, "learning_starts": warmup, "batch_size": 256,
                   "tau": 0.005, "gamma": 0.99, "train_freq": 1, "gradient_steps": 1, "ent_coef": "auto_1.0",
                   "policy_kwargs": {"net_arch": [256, 256]}}),
            false,
        ),
        "td3" => (
            json!({"actor_learning_rate": 1e-3, "critic_learning_rate": 1e-3, "buffer_size": 1_000_000,
                   "learning_starts": warmup, "batch_size": 256, "tau": 0.005, "gamma": 0.99, "hidden": [400, 300],
                   "exploration_noise": 0.1, "policy_noise": 0.2, "noise_clip": 0.5, "policy_delay": 2}),
            json!({"learning_rate": 1e-3, "buffer_size": 1_000_000, "learning_starts": warmup, "batch_size": 256,
                   "tau": 0.005, "gamma": 0.99, "policy_delay": 2, "target_policy_noise": 0.2,
                   "target_noise_clip": 0.5, "train_freq": 1, "gradient_steps": 1,
                   "policy_kwargs": {"net_arch": [400, 300]}, "action_noise_std": 0.1}),
            false,
        ),
        // SB3's PPO defaults (Schulman et al. 2017's MuJoCo settings), observations normalized
        // (VecNormalize on their side).
        _ => (
            json!({"learning_rate": 3e-4, "gamma": 0.99, "gae_lambda": 0.95, "clip_range": 0.2, "epochs": 10,
                   "minibatch_size": 64, "rollout_steps": 512, "entropy_coef": 0.0, "value_coef": 0.5,
                   "max_grad_norm": 0.5, "normalize_observations": true, "sde_sample_freq": null,
                   "log_std_init": 0.0, "hidden": [64, 64]}),
            json!({"learning_rate": 3e-4, "n_steps": 512, "batch_size": 64, "n_epochs": 10, "gamma": 0.99,
                   "gae_lambda": 0.95, "clip_range": 0.2, "ent_coef": 0.0, "vf_coef": 0.5, "max_grad_norm": 0.5}),
            true,
        ),
    }
}

#[derive(Debug, Clone)]
pub struct SimulatorBenchConfig {
    pub seeds: Vec<u64>,
    /// Budgets times this (1: the full budgets; below 1 for a quick look, said in the report).
    pub steps_scale: f64,
    /// Only the tasks whose env or `algorithm:env` is listed (empty: all).
    pub only: Vec<String>,
    /// H-term weights: our runs again with each (off-policy tasks; empty: none).
    pub h_term_lambdas: Vec<f64>,
    /// `(python, benches/peers/sb3_simulators_peer.py)`; None: ours only.
    pub peer: Option<(PathBuf, PathBuf)>,
    /// Both sides at once, one thread each (the peer in its own process, ours in this one),
    /// instead of one after the other with every core: a 2-core machine runs a row in about
    /// SB3's time alone, and each side's seconds are measured beside the other's one thread.
    pub side_by_side: bool,
}

#[derive(Debug, Deserialize)]
pub struct PeerRun {
    pub algorithm: String,
    pub env: String,
    pub seed: u64,
    pub final_return: f64,
    pub train_s: f64,
    /// (env step, mean return) of every evaluation.
    #[serde(default)]
    pub evaluations: Vec<(f64, f64)>,
}

#[derive(Debug, Deserialize)]
pub struct PeerReport {
    pub versions: Value,
    pub runs: Vec<PeerRun>,
}

/// One of our runs: training seconds and every evaluation's mean return (at least one).
#[derive(Debug, Clone)]
pub struct OurRun {
    pub train_s: f64,
    pub curve: Vec<f64>,
}

impl OurRun {
    /// The last evaluation's mean return.
    pub fn final_return(&self) -> f64 {
        self.curve[self.curve.len() - 1]
    }

    /// The largest drop between consecutive evaluations (how unstable the curve is).
    pub fn largest_drop(&self) -> f64 {
        self.curve.windows(2).map(|w| (w[0] - w[1]).max(0.0)).fold(0.0, f64::max)
    }
}

/// Trains `algorithm` on `gymnasium:<env>` for `budget` steps with the table's settings.
pub fn our_run(algorithm: &str, env: &str, budget: usize, seed: u64, h_term_lambda: f64) -> Result<OurRun> {
    crate::progress::figure(format!("measuring ours {algorithm} {env} seed {seed} lambda {h_term_lambda}"));
    let (overrides, _, _) = hyperparameters(algorithm, budget);
    let config = TrainConfig {
        eval_every: (budget / EVALUATIONS).max(1),
        eval_episodes: EVAL_EPISODES,
        overrides,
        h_term_lambda,
        ..TrainConfig::new(algorithm, &format!("gymnasium:{env}"), budget, seed)
    };
    let outcome = train(&config)?;
    let curve: Vec<f64> = outcome.evaluations.iter().map(|e| e.return_mean).collect();
    let final_return = *curve.last().context("no evaluation")?;
    crate::progress::row_done(format!(
        "ours {algorithm} {env} seed {seed} lambda {h_term_lambda}: {final_return:.1} in {:.1} s",
        outcome.train_s
    ));
    Ok(OurRun { train_s: outcome.train_s, curve })
}

fn selected(config: &SimulatorBenchConfig) -> Vec<(SimulatorTask, usize)> {
    TASKS
        .iter()
        .filter(|t| {
            config.only.is_empty()
                || config.only.iter().any(|o| o == t.env || *o == format!("{}:{}", t.algorithm, t.env))
        })
        .map(|t| (t.clone(), ((t.budget as f64 * config.steps_scale).round() as usize).max(1000)))
        .collect()
}

/// SB3's runs of `tasks` (each at its budget) over `seeds`, by the peer script; `threads`: its
/// torch threads (None: torch's default).
pub fn peer_runs(
    python: &Path,
    script: &Path,
    tasks: &[(SimulatorTask, usize)],
    seeds: &[u64],
    threads: Option<usize>,
) -> Result<PeerReport> {
    let table: Vec<Value> = tasks
        .iter()
        .map(|(t, budget)| {
            let (_, sb3, normalize) = hyperparameters(t.algorithm, *budget);
            json!({"algorithm": t.algorithm, "env": t.env, "budget": budget,
                   "eval_every": (budget / EVALUATIONS).max(1), "eval_episodes": EVAL_EPISODES,
                   "seeds": seeds, "sb3": sb3, "normalize_observations": normalize,
                   "n_envs": if t.algorithm == "ppo" { PPO_ENVS } else { 1 }})
        })
        .collect();
    let mut command = std::process::Command::new(python);
    if let Some(n) = threads {
        command.env("OMP_NUM_THREADS", n.to_string()).env("MKL_NUM_THREADS", n.to_string());
    }
    let mut child = command
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .with_context(|| format!("running {} {}", python.display(), script.display()))?;
    use std::io::Write;
    child.stdin.take().context("peer stdin")?.write_all(serde_json::to_string(&table)?.as_bytes())?;
    let output = child.wait_with_output()?;
    anyhow::ensure!(output.status.success(), "peer script failed: {}", output.status);
    serde_json::from_slice(&output.stdout).context("peer script output")
}

/// Our runs of every task over the seeds, in the report's order.
fn our_runs(config: &SimulatorBenchConfig, tasks: &[(SimulatorTask, usize)]) -> Result<Vec<Vec<OurRun>>> {
    tasks
        .iter()
        .map(|(task, budget)| {
            config.seeds.iter().map(|&s| our_run(task.algorithm, task.env, *budget, s, 0.0)).collect()
        })
        .collect()
}

/// The row's seeds one by one: final returns ours / SB3's, training seconds, and both sides'
/// evaluations (every tenth of the budget).
fn write_per_seed(
    out: &mut String,
    task: &SimulatorTask,
    seeds: &[u64],
    ours: &[OurRun],
    theirs: &[&PeerRun],
) -> Result<()> {
    writeln!(out, "\n{} {}, per seed:\n", task.algorithm, task.env)?;
    let round = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>().join(", ");
    for (seed, run) in seeds.iter().zip(ours) {
        write!(out, "- seed {seed}: ours {:.1} in {:.0} s", run.final_return(), run.train_s)?;
        let peer = theirs.iter().find(|r| r.seed == *seed);
        if let Some(p) = peer {
            write!(out, ", SB3 {:.1} in {:.0} s", p.final_return, p.train_s)?;
        }
        write!(out, "; evaluations ours {}", round(&run.curve))?;
        if let Some(p) = peer {
            write!(out, ", SB3 {}", round(&p.evaluations.iter().map(|e| e.1).collect::<Vec<_>>()))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

pub fn run_simulators(config: &SimulatorBenchConfig) -> Result<String> {
    let tasks = selected(config);
    anyhow::ensure!(!tasks.is_empty(), "--only matches no task");
    let threads = config.side_by_side.then_some(1);
    let peer_side = || {
        config
            .peer
            .as_ref()
            .map(|(python, script)| peer_runs(python, script, &tasks, &config.seeds, threads))
            .transpose()
    };
    let (peer, runs) = if config.side_by_side {
        // libtorch's intra-op pool is the process's: one thread here, one in the peer's process.
        tch::set_num_threads(1);
        std::thread::scope(|scope| {
            let peer = scope.spawn(peer_side);
            let runs = our_runs(config, &tasks);
            (peer.join().expect("the peer thread does not panic"), runs)
        })
    } else {
        // The peer first: a failing peer stops the bench before our runs take their hours.
        let peer = peer_side()?;
        (Ok(peer), our_runs(config, &tasks))
    };
    let (peer, runs) = (peer?, runs?);
    let mut out = String::new();
    writeln!(
        out,
        "# Simulators through the Gymnasium bridge against Stable-Baselines3 (`rlsolver bench simulators`)\n"
    )?;
    writeln!(
        out,
        "Final evaluation's mean return ({EVAL_EPISODES} deterministic episodes, fresh starts), median (worst) over \
         seeds {:?}; training seconds without evaluations, median; both sides in this run on this machine ({} cores){}, \
         same hyperparameters (`src/bench/simulators.rs`). Budgets x{}.\n",
        config.seeds,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        if config.side_by_side { ", side by side, one thread each" } else { ", one after the other" },
        config.steps_scale
    )?;
    if let Some(p) = &peer {
        writeln!(out, "Peer: `benches/peers/sb3_simulators_peer.py`, {}\n", p.versions)?;
    }
    writeln!(
        out,
        "| task | simulator | steps | ours | SB3 | ours - SB3 (medians) | our train s | SB3 train s | SB3 s / our s |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|")?;
    let mut studies = Vec::new();
    let mut per_seed = String::new();
    for ((task, budget), runs) in tasks.iter().zip(runs) {
        let (ours, ours_worst) = median_and_worst(&mut runs.iter().map(OurRun::final_return).collect::<Vec<_>>(), true);
        let our_s = median(&mut runs.iter().map(|r| r.train_s).collect::<Vec<_>>());
        let theirs: Vec<&PeerRun> = peer
            .iter()
            .flat_map(|p| &p.runs)
            .filter(|r| r.algorithm == task.algorithm && r.env == task.env && config.seeds.contains(&r.seed))
            .collect();
        let (peer_cells, diff, their_s, ratio) = if theirs.is_empty() {
            ("-".to_string(), "-".to_string(), "-".to_string(), "-".to_string())
        } else {
            let (m, w) = median_and_worst(&mut theirs.iter().map(|r| r.final_return).collect::<Vec<_>>(), true);
            let s = median(&mut theirs.iter().map(|r| r.train_s).collect::<Vec<_>>());
            (format!("{m:.1} ({w:.1})"), format!("{:+.1}", ours - m), format!("{s:.0}"), format!("{:.2}", s / our_s))
        };
        writeln!(
            out,
            "| {} {} | {} | {budget} | {ours:.1} ({ours_worst:.1}) | {peer_cells} | {diff} | {our_s:.0} | {their_s} | {ratio} |",
            task.algorithm, task.env, task.simulator
        )?;
        write_per_seed(&mut per_seed, task, &config.seeds, &runs, &theirs)?;
        if task.algorithm != "ppo" && !config.h_term_lambdas.is_empty() {
            studies.push((task.clone(), *budget, runs));
        }
    }
    out.push_str(&per_seed);
    if !studies.is_empty() {
        writeln!(out, "\n## H-term (our runs with each lambda; 0 = the rows above)\n")?;
        writeln!(out, "| task | lambda | final return median | spread (max - min) | worst seed | largest evaluation drop, median |")?;
        writeln!(out, "|---|---|---|---|---|---|")?;
        for (task, budget, base) in studies {
            let mut rows = vec![(0.0, base)];
            for &lambda in &config.h_term_lambdas {
                let runs = config
                    .seeds
                    .iter()
                    .map(|&s| our_run(task.algorithm, task.env, budget, s, lambda))
                    .collect::<Result<Vec<_>>>()?;
                rows.push((lambda, runs));
            }
            for (lambda, runs) in rows {
                let mut finals: Vec<f64> = runs.iter().map(OurRun::final_return).collect();
                let (m, worst) = median_and_worst(&mut finals, true);
                let best = finals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let drop = median(&mut runs.iter().map(OurRun::largest_drop).collect::<Vec<_>>());
                writeln!(
                    out,
                    "| {} {} | {lambda} | {m:.1} | {:.1} | {worst:.1} | {drop:.1} |",
                    task.algorithm,
                    task.env,
                    best - worst
                )?;
            }
        }
    }
    Ok(out)
}

/// `rlsolver bench simulators`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_simulators(&SimulatorBenchConfig {
        seeds: args.seeds.clone(),
        steps_scale: args.steps_scale,
        only: args.only.clone(),
        h_term_lambdas: args.h_term_lambdas.clone(),
        peer: args
            .python
            .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/sb3_simulators_peer.py".into()))),
        side_by_side: args.side_by_side,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_seed_lines_pair_each_seed_with_the_peer_run_of_that_seed() {
        let task = TASKS[0].clone();
        let ours = [OurRun { train_s: 5.6, curve: vec![1.0, 12.34] }, OurRun { train_s: 6.4, curve: vec![9.0, 7.0] }];
        // The peer answers seed 1 only, and first in its list.
        let theirs = PeerRun {
            algorithm: task.algorithm.into(),
            env: task.env.into(),
            seed: 1,
            final_return: 20.0,
            train_s: 9.6,
            evaluations: vec![(500.0, 3.0), (1000.0, 20.0)],
        };
        let mut out = String::new();
        write_per_seed(&mut out, &task, &[0, 1], &ours, &[&theirs]).unwrap();
        let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("- ")).collect();
        assert_eq!(
            lines,
            [
                "- seed 0: ours 12.3 in 6 s; evaluations ours 1, 12",
                "- seed 1: ours 7.0 in 6 s, SB3 20.0 in 10 s; evaluations ours 9, 7, SB3 3, 20",
            ]
        );
    }
}

#[cfg(test)]
mod verify {
    //! The simulator rows, behind `make verify` (`cargo test --release -- --ignored`): each
    //! task of `TASKS` at its full budget, ours through the Gymnasium bridge and
    //! Stable-Baselines3 by the peer script with the same hyperparameters, seeds 0-2. The goal is
    //! our median final return at least SB3's (within 10% of its magnitude: three seeds cannot
    //! resolve less); each test prints both sides and the training seconds.

    use super::{median_and_worst, our_run, peer_runs, OurRun, TASKS};
    use std::path::PathBuf;

    const SEEDS: [u64; 3] = [0, 1, 2];

    fn matches_sb3(algorithm: &str, env: &str) {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let task =
            TASKS.iter().find(|t| t.algorithm == algorithm && t.env == env).expect("a task of the table").clone();
        let python = root.join(".venv/bin/python");
        let script = root.join("benches/peers/sb3_simulators_peer.py");
        let peer = peer_runs(&python, &script, &[(task.clone(), task.budget)], &SEEDS, None)
            .expect("SB3 runs (make simulators)");
        let mut theirs: Vec<f64> = peer.runs.iter().map(|r| r.final_return).collect();
        let ours: Vec<_> = SEEDS.iter().map(|&s| our_run(algorithm, env, task.budget, s, 0.0).unwrap()).collect();
        let (our_median, our_worst) =
            median_and_worst(&mut ours.iter().map(OurRun::final_return).collect::<Vec<_>>(), true);
        let (their_median, their_worst) = median_and_worst(&mut theirs, true);
        let our_s: f64 = ours.iter().map(|r| r.train_s).sum::<f64>() / ours.len() as f64;
        let their_s: f64 = peer.runs.iter().map(|r| r.train_s).sum::<f64>() / peer.runs.len() as f64;
        println!(
            "| {algorithm} {env} | {} | ours {our_median:.1} ({our_worst:.1}) | SB3 {their_median:.1} ({their_worst:.1}) | {our_s:.0} s vs {their_s:.0} s |",
            task.budget
        );
        assert!(
            our_median >= their_median - 0.1 * their_median.abs(),
            "{algorithm} {env}: our median {our_median:.1} below SB3's {their_median:.1}"
        );
    }

    #[test]
    #[ignore]
    fn sac_inverted_pendulum() {
        matches_sb3("sac", "InvertedPendulum-v5");
    }

    #[test]
    #[ignore]
    fn td3_inverted_pendulum() {
        matches_sb3("td3", "InvertedPendulum-v5");
    }

    #[test]
    #[ignore]
    fn ppo_inverted_double_pendulum() {
        matches_sb3("ppo", "InvertedDoublePendulum-v5");
    }

    #[test]
    #[ignore]
    fn sac_hopper() {
        matches_sb3("sac", "Hopper-v5");
    }

    #[test]
    #[ignore]
    fn td3_hopper() {
        matches_sb3("td3", "Hopper-v5");
    }

    #[test]
    #[ignore]
    fn sac_pybullet_hopper() {
        matches_sb3("sac", "pybullet_envs_gymnasium:HopperBulletEnv-v0");
    }
}

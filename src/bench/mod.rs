//! Benchmarks that write markdown reports: one module per target, each a row of `BENCHES`
//! (its name, what it measures, and `from_args`, which reads the flags it needs and runs it).
//! Figures are medians and worsts over seeds, peers run by the same command on the same machine.

/// The learner/rollout split against the single-process loop.
pub mod apex;
/// The search's chain backends at equal wall time, any device.
pub mod backends;
/// Simulated bifurcation on Gset at a wall time, any device.
pub mod bifurcation;
/// The Gymnasium bridge's throughput against gymnasium's own vector envs.
pub mod bridge;
pub mod cs;
/// Classic-control envs as device tensors and PPO on them, against the native ones.
pub mod device_envs;
pub mod drl;
pub mod ising_policy;
pub mod maxcut;
pub mod mimo;
pub mod nphard;
pub mod orgym;
/// Population-based training against independent runs.
pub mod population;
pub mod portfolio;
pub mod qubo;
/// Our algorithms on MuJoCo and PyBullet through the bridge against SB3, and the H-term study.
pub mod simulators;
pub mod tnco;
/// PPO and SAC on FinRL's stock-trading env against buy-and-hold and mean-variance.
pub mod trading;
pub mod tsp;

use std::path::PathBuf;

/// One `rlsolver bench` target: its name, what it measures, and the run that writes its report.
pub struct Bench {
    pub name: &'static str,
    pub summary: &'static str,
    pub run: fn(Args) -> anyhow::Result<String>,
}

/// Every `bench` target; clap refuses any other name and lists these with their summaries.
pub const BENCHES: &[Bench] = &[
    Bench { name: "maxcut", summary: "solution quality on the Gset graphs against time (median and worst over --seeds)", run: maxcut::from_args },
    Bench { name: "drl", summary: "env throughput against gymnasium and time to threshold against Stable-Baselines3 (peer by --python)", run: drl::from_args },
    Bench { name: "mimo", summary: "sum rates of the baselines, the policies and the search on a channel set", run: mimo::from_args },
    Bench { name: "cs", summary: "the phase transition of the compressive-sensing recovery methods", run: cs::from_args },
    Bench { name: "nphard", summary: "optima of the classical NP-hard benchmark sets (--only: these problems' suites)", run: nphard::from_args },
    Bench { name: "tnco", summary: "contraction orders of the Sycamore circuits against cotengra (peer by --python)", run: tnco::from_args },
    Bench { name: "portfolio", summary: "Chang et al.'s cardinality-constrained frontiers", run: portfolio::from_args },
    Bench { name: "tsp", summary: "TSPLIB tours against their optima", run: tsp::from_args },
    Bench { name: "qubo", summary: "generated OR-Library-style QUBOs against MQLib and dwave-samplers (peers by --python)", run: qubo::from_args },
    Bench { name: "orgym", summary: "OR-Gym policies against their references, env throughput against or-gymnasium (--only: sections)", run: orgym::from_args },
    Bench { name: "bifurcation", summary: "simulated bifurcation on Gset at each time limit, --chains chains (default 1024), on --device", run: bifurcation::from_args },
    Bench { name: "backends", summary: "the search with each of --backends at each time limit on --device, on the Gset graphs named by --only and a --torus-side torus", run: backends::from_args },
    Bench { name: "device-envs", summary: "classic control as tensors on --device and PPO on them against the native envs and loop", run: device_envs::from_args },
    Bench { name: "ising-policy", summary: "the pretrained Ising policy against greedy and SA, and the search with and without it, at the first --time-limit", run: ising_policy::from_args },
    Bench { name: "population", summary: "PBT against independent runs at equal env steps (SAC on Pendulum-v1, MADDPG on simple_spread; --only pendulum or spread)", run: population::from_args },
    Bench { name: "apex", summary: "a learner with --rollouts rollout processes against the single-process loop at equal --updates", run: apex::from_args },
    Bench { name: "bridge", summary: "gymnasium: envs through the Python bridge against gymnasium's own vector envs (peer by --python)", run: bridge::from_args },
    Bench { name: "simulators", summary: "our algorithms through the bridge against Stable-Baselines3 on MuJoCo and PyBullet tasks (--only, --seeds, --steps-scale)", run: simulators::from_args },
    Bench { name: "trading", summary: "PPO and SAC on StockTrading-v0 against buy-and-hold and mean-variance, out of sample, over --seeds markets", run: trading::from_args },
];

/// The flags of `rlsolver bench`; each target reads those it names.
#[derive(clap::Args)]
pub struct Args {
    /// What to benchmark.
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(BENCHES.iter().map(|b| clap::builder::PossibleValue::new(b.name).help(b.summary))))]
    pub problem: String,
    /// Folder of instances (maxcut: Gset .txt files, best-known values in its README.md; mimo:
    /// the folder holding rayleigh_k8_n8_100.json; nphard: the folder holding mis/; tnco: the
    /// folder of Sycamore adjacency lists; portfolio: the folder of portK.txt and portefK.txt;
    /// tsp: the folder of .tsp files with the optima in its README.md).
    #[arg(long, default_value = "../shared/data/gset")]
    pub instances: PathBuf,
    /// Comma-separated time limits in seconds, one column each.
    #[arg(long, default_value = "10,60", value_delimiter = ',')]
    pub time_limit: Vec<f64>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[arg(long)]
    pub chains: Option<usize>,
    /// cpu, cuda or auto.
    #[arg(long, default_value = "auto")]
    pub device: String,
    /// Also write the table to this file.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// drl, tnco, orgym, nphard: Python interpreter with the peer (stable-baselines3; cotengra;
    /// or-gymnasium; ortools and highspy) for the peer measurements (none: ours only).
    #[arg(long)]
    pub python: Option<PathBuf>,
    /// drl, tnco, orgym, nphard: the peer script (default: benches/peers/sb3_peer.py;
    /// benches/peers/cotengra_peer.py; benches/peers/orgym_peer.py; benches/peers/mip_peer.py).
    #[arg(long)]
    pub peer_script: Option<PathBuf>,
    /// maxcut, nphard, tnco, portfolio, tsp: seeds of our runs (median and worst per cell); drl: seeds of the time-to-threshold runs.
    #[arg(long, default_value = "0,1,2,3,4", value_delimiter = ',')]
    pub seeds: Vec<u64>,
    /// nphard: only these problems' suites; ising-policy, backends: only these Gset graphs; orgym: only these sections (knapsack,
    /// knapsack-online (its v3 rows), binpacking, newsvendor, inventory, portfolio, tsp,
    /// vmpacking, routing, throughput); comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// tsp: generated instances too, E<cities> uniform or C<cities> clustered (e.g. E2000,C3000;
    /// the generator's seed is --seed), against the shortest tour either side found.
    #[arg(long, value_delimiter = ',')]
    pub generated: Vec<String>,
    /// simulators, trading: every budget times this (1: the full budgets).
    #[arg(long, default_value_t = 1.0)]
    pub steps_scale: f64,
    /// simulators: run SB3 and ours at once, one torch thread each, instead of one after the
    /// other with every core.
    #[arg(long)]
    pub side_by_side: bool,
    /// simulators: also train the off-policy tasks with each of these H-term weights.
    #[arg(long, value_delimiter = ',')]
    pub h_term_lambdas: Vec<f64>,
    /// orgym: evaluation episodes per row.
    #[arg(long, default_value_t = 1000)]
    pub episodes: usize,
    /// backends: the search backends compared (native, tensor, tempering, bifurcation;
    /// default native,tempering,bifurcation).
    #[arg(long, value_delimiter = ',')]
    pub backends: Vec<String>,
    /// backends: side of the generated toroidal spin glass (default 100: 10,000 nodes; 0: none).
    #[arg(long)]
    pub torus_side: Option<usize>,
    /// apex: rollout process counts (default 1,2,4).
    #[arg(long, value_delimiter = ',')]
    pub rollouts: Vec<usize>,
    /// apex: learner updates per run (default 10000).
    #[arg(long)]
    pub updates: Option<usize>,
    /// population: job workers of the quality runs.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// population: worker counts of the wall-time table (comma-separated; empty: none).
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    pub timing_workers: Vec<usize>,
}

/// (median, worst) of `values` (sorted in place); the worst is the lowest when higher is better.
pub(crate) fn median_and_worst(values: &mut [f64], higher_is_better: bool) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    let worst = if higher_is_better { values[0] } else { values[values.len() - 1] };
    (median(values), worst)
}

/// The median of sorted values (the mean of the middle two for an even count).
pub(crate) fn median(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// One table cell of a peer that answers 0/1 `sides` (benches/peers/maxcut_peer.py): the peer
/// run on `file` at `limit` once per seed, each answer of `n` values scored by `score`; the
/// median and, in brackets, the worst (higher is better).
pub(crate) fn peer_sides_cell(
    (python, script): (&std::path::Path, &std::path::Path),
    peer: &str,
    file: &std::path::Path,
    (n, limit, seeds): (usize, f64, &[u64]),
    score: impl Fn(&[u8]) -> f64,
) -> anyhow::Result<String> {
    #[derive(serde::Deserialize)]
    struct PeerSides {
        sides: Vec<u8>,
    }
    let mut values = Vec::new();
    for &seed in seeds {
        crate::progress::figure(format!("measuring {}: {peer} at {limit} s, seed {seed}", file.display()));
        let args = [peer.to_string(), file.to_string_lossy().to_string(), limit.to_string(), seed.to_string()];
        let run: PeerSides = run_peer(python, script, &args)?;
        anyhow::ensure!(run.sides.len() == n, "{peer} on {}: {} values for {n}", file.display(), run.sides.len());
        values.push(score(&run.sides));
    }
    let (median, worst) = median_and_worst(&mut values, true);
    Ok(format!(" {median} ({worst}) |"))
}

/// Runs a peer script (`python script args...`, its progress on our stderr) and reads the one
/// JSON document it prints on stdout.
pub fn run_peer<T: serde::de::DeserializeOwned>(
    python: &std::path::Path,
    script: &std::path::Path,
    args: &[String],
) -> anyhow::Result<T> {
    use anyhow::Context;
    let output = std::process::Command::new(python)
        .arg(script)
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("running {} {}", python.display(), script.display()))?;
    anyhow::ensure!(output.status.success(), "peer script failed: {}", output.status);
    serde_json::from_slice(&output.stdout).context("peer script output")
}

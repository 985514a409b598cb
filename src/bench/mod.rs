//! Benchmarks that write markdown reports: `maxcut` (solution quality against time, median and
//! worst over seeds), `drl` (environment throughput and time to threshold, against
//! Stable-Baselines3 and gymnasium), `mimo` (sum rates of the baselines and the search on a channel
//! set), `cs` (the phase transition of the recovery methods) and `nphard` (the classical NP-hard
//! problems on benchmark sets with proven optima) and `tnco` (contraction orders against cotengra).

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
/// Our algorithms on MuJoCo and PyBullet through the bridge against SB3, and the H-term study.
pub mod simulators;
pub mod tnco;
/// PPO and SAC on FinRL's stock-trading env against buy-and-hold and mean-variance.
pub mod trading;
pub mod tsp;

pub use maxcut::{run_maxcut, BenchConfig};

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

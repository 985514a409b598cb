//! `bench bifurcation`: simulated bifurcation (`search::bifurcation`) on Gset graphs at a wall
//! time each, on any device: the steps are sized from a timed probe of 50 steps (after a warm-up
//! probe) so that the pump
//! completes within the time, and every cut is re-scored from the graph. Columns: the best-known
//! cut, the best cut over the chains (median and worst over seeds), the steps and the spin
//! updates per second (chains x spins x steps / seconds).

use super::maxcut::{best_known, instance_files};
use anyhow::{Context, Result};
use rlsolver::problems::maxcut::{parse_gset, MaxCutInstance};
use rlsolver::problems::{IsingProblem, Limits};
use rlsolver::search::bifurcation::{simulated_bifurcation, BifurcationParams, CouplingMatrix, Dynamics};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;
use tch::{Device, Kind};

/// Steps of the timing probe.
const PROBE_STEPS: usize = 50;

pub struct BifurcationBenchConfig {
    /// The Gset folder (best-known values in its README.md).
    pub instances: PathBuf,
    /// Wall time per run, seconds.
    pub time_limits_s: Vec<f64>,
    pub seeds: Vec<u64>,
    pub device: Device,
    /// Chains per run.
    pub chains: usize,
}

/// The best cut of a run's chains, re-scored from the graph.
fn best_cut(graph: &MaxCutInstance, spins: &tch::Tensor) -> f64 {
    let rows: Vec<Vec<i8>> = spins.to_kind(Kind::Int8).to_device(Device::Cpu).try_into().expect("int8 spins");
    rows.iter().map(|row| graph.cut_value(row)).fold(f64::MIN, f64::max)
}

pub fn run_bifurcation(config: &BifurcationBenchConfig) -> Result<String> {
    let known = best_known(&config.instances);
    let mut report = String::new();
    writeln!(
        report,
        "Simulated bifurcation (ballistic, dt 0.5), {} chains on {:?}; steps sized to the time by a {PROBE_STEPS}-step probe; \
         best cut over the chains, median (worst) over seeds {:?}.\n",
        config.chains, config.device, config.seeds
    )?;
    writeln!(report, "| graph | nodes | best known | time s | steps | best cut: median (worst) | spin updates / s |")?;
    writeln!(report, "|---|---|---|---|---|---|---|")?;
    for path in instance_files(&config.instances)? {
        let name = path.file_stem().unwrap_or_default().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let graph = parse_gset(&text, &Limits::default()).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let n = graph.num_nodes();
        let ising = graph.ising().tensors(config.device);
        let matrix = CouplingMatrix::of(&ising, 0.01);
        let base = BifurcationParams { dynamics: Dynamics::Ballistic, dt: 0.5, ..Default::default() };
        let probe_params = BifurcationParams { steps: PROBE_STEPS, ..base.clone() };
        // Reading a value waits for the device to finish; the first probe warms it up (kernels,
        // allocator, threads), the second is timed.
        let probe = || {
            let start = Instant::now();
            let run = simulated_bifurcation(&ising, &matrix, config.chains, &probe_params, 0, None);
            let _ = run.energies.sum(Kind::Double).double_value(&[]);
            start.elapsed().as_secs_f64() / PROBE_STEPS as f64
        };
        probe();
        let per_step = probe();
        let best = known.iter().find(|(k, _)| *k == name).map_or("-".to_string(), |(_, v)| format!("{v}"));
        for &limit in &config.time_limits_s {
            let steps = ((limit / per_step.max(1e-9)) as usize).max(20);
            let params = BifurcationParams { steps, ..base.clone() };
            let (mut cuts, mut rates) = (Vec::new(), Vec::new());
            for &seed in &config.seeds {
                let start = Instant::now();
                let deadline = Some(start + std::time::Duration::from_secs_f64(limit * 1.5));
                let run = simulated_bifurcation(&ising, &matrix, config.chains, &params, seed, deadline);
                let cut = best_cut(&graph, &run.spins);
                let seconds = start.elapsed().as_secs_f64();
                cuts.push(cut);
                rates.push((config.chains * n * run.steps_run) as f64 / seconds);
            }
            cuts.sort_by(f64::total_cmp);
            rates.sort_by(f64::total_cmp);
            writeln!(
                report,
                "| {name} | {n} | {best} | {limit} | {steps} | {} ({}) | {:.3e} |",
                super::median(&cuts),
                cuts[0],
                super::median(&rates)
            )?;
            crate::progress::row_done(format!("{name} {limit} s done"));
        }
    }
    Ok(report)
}

/// `rlsolver bench bifurcation`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_bifurcation(&BifurcationBenchConfig {
        instances: args.instances,
        time_limits_s: args.time_limit,
        seeds: args.seeds.clone(),
        device: rlsolver::problems::parse_device(Some(&args.device))?,
        chains: args.chains.unwrap_or(1024),
    })
}

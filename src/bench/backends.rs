//! `bench backends`: the whole search (`minimize`, tabu polish and all) with each chain backend at
//! equal wall time on one device: the Gset graphs named by `graphs` and the generated 100 x 100
//! toroidal spin glass (10,000 nodes). Per graph, backend and time limit, over the seeds: the cut
//! at the limit (median and worst, re-scored from the graph by `cut_value`) and the time to the
//! best-known cut (Gset; the search stops there), or, on the torus, to the best cut any run of
//! the table found. The GPU table is this command with `--device cuda`
//! (`benches/device/backends.sh`); the same command with `--device cpu` is the CPU column.

use super::maxcut::named_graphs;
use super::median_and_worst;
use anyhow::Result;
use rlsolver::problems::maxcut::generate::torus_gset;
use rlsolver::problems::maxcut::{parse_gset, MaxCutInstance};
use rlsolver::problems::{device_name, IsingProblem, Limits};
use rlsolver::search::chains::Backend;
use rlsolver::search::{minimize, SearchParams};
use std::fmt::Write as _;
use std::path::PathBuf;
use tch::Device;

pub struct BackendsBenchConfig {
    /// The Gset folder (best-known values in its README.md); only `graphs` are read from it.
    pub instances: PathBuf,
    pub graphs: Vec<String>,
    /// Side of the generated torus (0: none).
    pub torus_side: usize,
    pub backends: Vec<Backend>,
    pub time_limits_s: Vec<f64>,
    pub seeds: Vec<u64>,
    pub device: Device,
    /// Chains per run (None: the backend's default for the device).
    pub chains: Option<usize>,
}

impl Default for BackendsBenchConfig {
    fn default() -> Self {
        BackendsBenchConfig {
            instances: PathBuf::from("../shared/data/gset"),
            graphs: ["G14", "G15", "G22", "G49", "G50"].map(String::from).to_vec(),
            torus_side: 100,
            backends: vec![Backend::Native, Backend::Tempering, Backend::Bifurcation],
            time_limits_s: vec![1.0, 10.0],
            seeds: vec![0, 1, 2],
            device: Device::Cpu,
            chains: None,
        }
    }
}

/// One run: the cut, its incumbents (seconds, cut), the chains and rounds.
struct Run {
    cut: f64,
    incumbents: Vec<(f64, f64)>,
    chains: usize,
    rounds: usize,
}

impl Run {
    /// Seconds to the first incumbent at or above `target`.
    fn time_to(&self, target: f64) -> Option<f64> {
        self.incumbents.iter().find(|(_, cut)| *cut >= target - 1e-9).map(|(t, _)| *t)
    }
}

fn run(
    graph: &MaxCutInstance,
    backend: Backend,
    limit: f64,
    seed: u64,
    config: &BackendsBenchConfig,
    target: Option<f64>,
) -> Run {
    let params = SearchParams {
        time_limit_s: limit,
        seed,
        device: config.device,
        chains: config.chains,
        backend: Some(backend),
        target_energy: target.map(|t| graph.energy_for_objective(t)),
        ..SearchParams::default()
    };
    let outcome = minimize(graph.ising(), &params);
    let cut = graph.cut_value(&outcome.spins);
    let incumbents = outcome.history.iter().map(|i| (i.elapsed.as_secs_f64(), graph.objective(i.energy))).collect();
    Run { cut, incumbents, chains: outcome.chains, rounds: outcome.rounds }
}

/// Runs the benchmark; returns the markdown report (progress on stderr).
pub fn run_backends(config: &BackendsBenchConfig) -> Result<String> {
    anyhow::ensure!(!config.seeds.is_empty() && !config.time_limits_s.is_empty(), "need a seed and a time limit");
    let mut graphs = named_graphs(&config.instances, &config.graphs)?;
    if config.torus_side >= 3 {
        let side = config.torus_side;
        let graph = parse_gset(&torus_gset(side, 1), &Limits::default()).map_err(|e| anyhow::anyhow!("torus: {e}"))?;
        graphs.push((format!("torus {side}x{side}"), graph, None));
    }
    let mut report = String::new();
    writeln!(
        report,
        "Search backends at equal wall time on {} (seeds {:?}): the cut, median (worst) over the seeds, re-scored \
         from the graph, and the seconds to the best-known cut (Gset; the run stops there) or to the best cut of \
         the time limit's runs (torus), median (worst; 'no' = not reached by every seed).\n",
        device_name(config.device),
        config.seeds
    )?;
    writeln!(report, "| graph | nodes | best known | backend | chains | time s | rounds | cut | to best s |")?;
    writeln!(report, "|---|---|---|---|---|---|---|---|---|")?;
    for (name, graph, best) in &graphs {
        for &limit in &config.time_limits_s {
            let mut rows = Vec::new();
            for &backend in &config.backends {
                let runs: Vec<Run> = config
                    .seeds
                    .iter()
                    .map(|&seed| {
                        let result = run(graph, backend, limit, seed, config, *best);
                        crate::progress::row_done(format!(
                            "{name} {backend:?} {limit} s seed {seed}: cut {} ({} rounds)",
                            result.cut, result.rounds
                        ));
                        result
                    })
                    .collect();
                rows.push((backend, runs));
            }
            let row_best = rows.iter().flat_map(|(_, runs)| runs.iter().map(|r| r.cut)).fold(f64::MIN, f64::max);
            let target = best.unwrap_or(row_best);
            for (backend, runs) in &rows {
                let mut cuts: Vec<f64> = runs.iter().map(|r| r.cut).collect();
                let (median_cut, worst_cut) = median_and_worst(&mut cuts, true);
                let mut times: Vec<f64> = runs.iter().map(|r| r.time_to(target).unwrap_or(f64::INFINITY)).collect();
                let (median_time, worst_time) = median_and_worst(&mut times, false);
                let show = |t: f64| if t.is_finite() { format!("{t:.2}") } else { "no".into() };
                let mut rounds: Vec<f64> = runs.iter().map(|r| r.rounds as f64).collect();
                let (median_rounds, _) = median_and_worst(&mut rounds, true);
                writeln!(
                    report,
                    "| {name} | {} | {} | {backend:?} | {} | {limit} | {median_rounds} | {median_cut} ({worst_cut}) | {} ({}) |",
                    graph.num_nodes(),
                    best.map_or("-".into(), |b| format!("{b}")),
                    runs[0].chains,
                    show(median_time),
                    show(worst_time),
                )?;
            }
        }
    }
    Ok(report)
}

/// `rlsolver bench backends`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    let defaults = BackendsBenchConfig::default();
    let backends = args
        .backends
        .iter()
        .map(|name| {
            rlsolver::problems::parse_backend(Some(name))?
                .ok_or_else(|| anyhow::anyhow!("--backends: name one, not auto"))
        })
        .collect::<Result<Vec<_>>>()?;
    run_backends(&BackendsBenchConfig {
        instances: args.instances,
        graphs: if args.only.is_empty() { defaults.graphs } else { args.only.clone() },
        torus_side: args.torus_side.unwrap_or(defaults.torus_side),
        backends: if backends.is_empty() { defaults.backends } else { backends },
        time_limits_s: args.time_limit,
        seeds: args.seeds.clone(),
        device: rlsolver::problems::parse_device(Some(&args.device))?,
        chains: args.chains,
    })
}

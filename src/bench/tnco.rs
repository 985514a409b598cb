//! `rlsolver bench tnco`: contraction orders on the shared Sycamore networks (`tnco/`) and on
//! generated random circuits (`tensor_network::generate`, seeds fixed here, never tuned on),
//! through the same load and solve as a request (`tensor_network::load`, `Instance::solve`). Ours runs once per seed at the longest limit;
//! the anytime history gives the cost at each shorter limit (median and worst over the seeds).
//! The peer script (`benches/peers/cotengra_peer.py`) runs cotengra's hyper-optimizer (greedy +
//! kahypar, optuna) once per limit on the same network file, and opt_einsum's greedy. The policy
//! column is the shipped model's rollout alone (`method=policy`, models from `RLSOLVER_MODELS_DIR`
//! or `models/`) with its inference time; ours starts its chains from it too.

use super::median;
use anyhow::{Context, Result};
use rlsolver::models::ModelRegistry;
use rlsolver::problems::tensor_network::{self, generate::random_circuit};
use rlsolver::problems::{Instance, Limits, Models, ProblemInput, SolveReport};
use rlsolver::search::SearchParams;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct TncoBenchConfig {
    /// The folder holding the Sycamore adjacency lists (`sycamore_*.txt`).
    pub instances: PathBuf,
    pub time_limits_s: Vec<f64>,
    pub seeds: Vec<u64>,
    /// The .venv interpreter with cotengra and the peer script (None: ours only).
    pub peer: Option<(PathBuf, PathBuf)>,
    /// Generated circuits: (qubits, cycles, seed).
    pub generated: Vec<(usize, usize, u64)>,
}

impl TncoBenchConfig {
    pub fn in_folder(instances: &Path) -> Self {
        TncoBenchConfig {
            instances: instances.to_path_buf(),
            time_limits_s: vec![10.0, 60.0],
            seeds: vec![0, 1, 2],
            peer: None,
            generated: vec![(53, 14, 1401), (64, 12, 1402)],
        }
    }
}

/// The best cost reached within `seconds` (None: nothing by then).
fn at(report: &SolveReport, seconds: f64) -> Option<f64> {
    report.history.iter().filter(|p| p.elapsed_ms <= seconds * 1e3).map(|p| p.objective).reduce(f64::min)
}

fn peer(python: &Path, script: &Path, args: &[String]) -> Result<Value> {
    super::run_peer(python, script, args)
}

/// Runs the benchmark; returns the markdown report.
pub fn run_tnco(config: &TncoBenchConfig) -> Result<String> {
    // The shipped models: the search starts its chains from the policy's rollout as a request does.
    let registry = ModelRegistry::load_dir(&rlsolver::models::default_dir(), rlsolver::problems::policy_loaders);
    let models = Models { registry: &registry, requested: None };
    let limits = Limits { max_time_limit_s: f64::INFINITY, ..Limits::default() };
    let mut networks: Vec<(String, PathBuf)> = std::fs::read_dir(&config.instances)
        .with_context(|| format!("reading {}", config.instances.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .map(|p| (p.file_stem().unwrap_or_default().to_string_lossy().into_owned(), p))
        .collect();
    networks.sort();
    let generated_dir = std::env::temp_dir().join(format!("rlsolver-bench-tnco-{}", std::process::id()));
    std::fs::create_dir_all(&generated_dir)?;
    for &(qubits, cycles, seed) in &config.generated {
        let name = format!("circuit_q{qubits}_m{cycles}_s{seed}");
        let path = generated_dir.join(format!("{name}.json"));
        std::fs::write(&path, random_circuit(qubits, cycles, seed).to_string())?;
        networks.push((format!("{name} (generated)"), path));
    }
    let longest = config.time_limits_s.iter().copied().fold(0.0, f64::max);
    let seeds = config.seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    let mut out = String::new();
    writeln!(out, "# Contraction orders (log10 multiplications, lower is better)\n")?;
    writeln!(
        out,
        "`rlsolver bench tnco` on {} CPU threads. Ours: median (worst) over seeds {seeds}, one run per seed at {longest} s, \
         read at each limit from its anytime history; its largest intermediate (log2) at the longest limit, median. \
         cotengra: HyperOptimizer(methods=[greedy, kahypar], minimize=flops), one run per limit. Costs re-scored by cotengra in tests/tensor_network.rs.\n",
        rayon::current_num_threads()
    )?;
    let mut header = String::from("| network | tensors | opt_einsum greedy | our greedy | policy alone (ms) |");
    let mut rule = String::from("| --- | --- | --- | --- | --- |");
    for limit in &config.time_limits_s {
        write!(header, " ours {limit} s | cotengra {limit} s |")?;
        rule.push_str(" --- | --- |");
    }
    header.push_str(" ours largest (log2) |");
    rule.push_str(" --- |");
    writeln!(out, "{header}\n{rule}")?;
    for (name, path) in &networks {
        let text = std::fs::read_to_string(path)?;
        let json: Option<Value> =
            path.extension().is_some_and(|e| e == "json").then(|| serde_json::from_str(&text)).transpose()?;
        let input = match &json {
            Some(value) => ProblemInput::Json(value),
            None => ProblemInput::Text(&text),
        };
        let instance = tensor_network::load(input, &limits).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let quick = SearchParams { time_limit_s: 1.0, ..SearchParams::default() };
        let greedy = instance.solve_baseline("greedy", &quick, models).map_err(|e| anyhow::anyhow!("{e}"))?;
        let peer_greedy = match &config.peer {
            Some((python, script)) => {
                let value = peer(python, script, &["greedy".into(), path.display().to_string()])?;
                format!("{:.2}", value["cost_log10"].as_f64().unwrap_or(f64::NAN))
            }
            None => "-".into(),
        };
        let policy = match instance.solve_baseline("policy", &quick, models) {
            Ok(report) => format!("{:.2} ({:.1})", report.objective, report.elapsed_ms),
            Err(_) => "-".into(),
        };
        let runs: Vec<SolveReport> = config
            .seeds
            .iter()
            .map(|&seed| {
                let params = SearchParams { time_limit_s: longest, seed, ..SearchParams::default() };
                instance.solve(&params, models)
            })
            .collect();
        let mut row =
            format!("| {name} | {} | {peer_greedy} | {:.2} | {policy} |", instance.num_tensors(), greedy.objective);
        for &limit in &config.time_limits_s {
            let mut costs: Vec<f64> = runs.iter().map(|r| at(r, limit).unwrap_or(f64::INFINITY)).collect();
            costs.sort_by(f64::total_cmp);
            write!(row, " {:.2} ({:.2}) |", median(&costs), costs[costs.len() - 1])?;
            match &config.peer {
                Some((python, script)) => {
                    let args =
                        ["search".into(), path.display().to_string(), limit.to_string(), config.seeds[0].to_string()];
                    let value = peer(python, script, &args)?;
                    write!(
                        row,
                        " {:.2} (2^{:.0}) |",
                        value["cost_log10"].as_f64().unwrap_or(f64::NAN),
                        value["largest_log2"].as_f64().unwrap_or(f64::NAN)
                    )?;
                }
                None => row.push_str(" - |"),
            }
        }
        let mut largest: Vec<f64> =
            runs.iter().map(|r| r.solution["largest_intermediate_log2"].as_f64().unwrap_or(f64::NAN)).collect();
        largest.sort_by(f64::total_cmp);
        write!(row, " {:.0} |", median(&largest))?;
        writeln!(out, "{row}")?;
        crate::progress::row_done(row.clone());
    }
    Ok(out)
}

/// `rlsolver bench tnco`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_tnco(&TncoBenchConfig {
        time_limits_s: args.time_limit,
        seeds: args.seeds,
        peer: args
            .python
            .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/cotengra_peer.py".into()))),
        ..TncoBenchConfig::in_folder(&args.instances)
    })
}

//! `rlsolver bench maxcut`: our search and the baselines on a folder of Gset graphs, one
//! process, one markdown table. Ours runs a request's path once per seed (the search, then the
//! eigenvalue bound in its share of the limit, `problems::BOUND_SHARE`); a cell is the median cut
//! over the seeds and, in brackets, the worst. With a Python (`--python`), the peers run with the same limits and
//! seeds (benches/peers/maxcut_peer.py): MQLib's BURER2002 and hyper-heuristic (`make mqlib`)
//! and dwave-samplers' TabuSampler; their cuts are re-scored here from the sides they return.

use super::median;
use anyhow::{Context, Result};
use rlsolver::models::ModelRegistry;
use rlsolver::problems::maxcut::{parse_gset, MaxCutInstance};
use rlsolver::problems::{device_name, Instance, IsingProblem, Limits, Models};
use rlsolver::search::SearchParams;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tch::Device;

/// The baselines that run without a model. The Ising policy (the problem's fourth baseline) needs
/// the registry and is measured at equal time by `bench ising-policy`; listing it here made every
/// `bench maxcut` run panic.
const SEARCH_BASELINES: &[&str] = &["greedy", "sa", "rank2"];

#[derive(Debug, Clone)]
pub struct BenchConfig {
    pub instances: PathBuf,
    /// One column of ours per limit; the baselines run at the first (smallest) one.
    pub time_limits_s: Vec<f64>,
    /// Seeds of our runs (each cell: median and worst); the baselines run with the first.
    pub seeds: Vec<u64>,
    pub device: Device,
    pub chains: Option<usize>,
    /// Python with dwave-samplers and the peer script; None: ours and the baselines only.
    pub peer: Option<(PathBuf, PathBuf)>,
}

/// The peers the peer script runs, by its names.
const PEERS: &[&str] = &["burer2002", "mqlib-hh", "dwave-tabu"];

/// Best-known values from the folder's README table rows `| name | ... | value |`.
pub(crate) fn best_known(dir: &Path) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(dir.join("README.md")).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
            let value = cells.last()?.parse::<f64>().ok()?;
            (cells.len() >= 2).then(|| (cells[0].to_string(), value))
        })
        .collect()
}

/// Gset files sorted by their number (G1, G14, ... not G1, G14, G2).
pub(crate) fn instance_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    let key = |p: &PathBuf| {
        let stem = p.file_stem().unwrap_or_default().to_string_lossy().to_string();
        let digits: String = stem.chars().filter(char::is_ascii_digit).collect();
        (digits.parse::<u64>().unwrap_or(u64::MAX), stem)
    };
    files.sort_by_key(key);
    Ok(files)
}

/// The Gset graphs `names` of `dir`, each with its best-known cut when the README has one.
pub(crate) fn named_graphs(dir: &Path, names: &[String]) -> Result<Vec<(String, MaxCutInstance, Option<f64>)>> {
    let known = best_known(dir);
    let files = if names.is_empty() { Vec::new() } else { instance_files(dir)? };
    names
        .iter()
        .map(|name| {
            let path = files
                .iter()
                .find(|p| p.file_stem().is_some_and(|s| s.to_string_lossy() == *name))
                .with_context(|| format!("{name} is not in {}", dir.display()))?;
            let text = std::fs::read_to_string(path)?;
            let graph = parse_gset(&text, &Limits::default()).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
            Ok((name.clone(), graph, known.iter().find(|(k, _)| k == name).map(|(_, v)| *v)))
        })
        .collect()
}

/// Runs the benchmark and returns the markdown report; progress goes to stderr.
pub fn run_maxcut(config: &BenchConfig) -> Result<String> {
    let known = best_known(&config.instances);
    let files = instance_files(&config.instances)?;
    anyhow::ensure!(!files.is_empty(), "no .txt instances in {}", config.instances.display());
    anyhow::ensure!(!config.seeds.is_empty() && !config.time_limits_s.is_empty(), "need a seed and a time limit");
    let baseline_limit = config.time_limits_s.iter().copied().fold(f64::INFINITY, f64::min);
    let peers: &[&str] = if config.peer.is_some() { PEERS } else { &[] };
    let registry = ModelRegistry::empty(rlsolver::problems::policy_loaders);
    let models = Models { registry: &registry, requested: None };
    let mut report = String::new();
    writeln!(
        report,
        "| graph | n | m | best known |{} eigenvalue bound at the longest limit, last seed | its gap, median (worst) | time to best at the longest limit, last seed (s) | chains | device |{}",
        config
            .time_limits_s
            .iter()
            .map(|t| format!(" ours {t} s, median (worst) of {} seeds |", config.seeds.len()))
            .collect::<String>(),
        SEARCH_BASELINES.iter().map(|b| format!(" {b} {baseline_limit} s |")).collect::<String>()
            + &peers
                .iter()
                .flat_map(|p| config.time_limits_s.iter().map(move |t| format!(" {p} {t} s |")))
                .collect::<String>()
    )?;
    writeln!(
        report,
        "|---|---|---|---|{}---|---|---|---|---|{}",
        "---|".repeat(config.time_limits_s.len()),
        "---|".repeat(SEARCH_BASELINES.len() + peers.len() * config.time_limits_s.len())
    )?;
    for file in files {
        let name = file.file_stem().unwrap_or_default().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&file)?;
        let graph: MaxCutInstance =
            parse_gset(&text, &Limits::default()).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let best = known.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        let mut row = format!(
            "| {name} | {} | {} | {} |",
            graph.num_nodes(),
            graph.edges().len(),
            best.map_or("?".into(), |b| format!("{b}"))
        );
        let mut last = None;
        let mut gaps = Vec::new();
        for &limit in &config.time_limits_s {
            let mut cuts = Vec::new();
            gaps.clear();
            for &seed in &config.seeds {
                crate::progress::figure(format!("measuring {name} at {limit} s, seed {seed}"));
                let params = SearchParams {
                    time_limit_s: limit,
                    seed,
                    device: config.device,
                    chains: config.chains,
                    target_energy: best.map(|b| graph.energy_for_objective(b)),
                    // The service's own stopping rule and restarts (default patience): what a
                    // request gets. (With patience switched off the search never restarts a
                    // stagnant cycle: G22 10 s gave 13322 on one seed of 0-4 that way.)
                    ..SearchParams::default()
                };
                // A request's path: the search, then the eigenvalue bound in its share of the limit.
                let solved = graph.solve(&params, models);
                let sides: Vec<u8> = serde_json::from_value(solved.solution.clone())?;
                let spins: Vec<i8> = sides.iter().map(|&s| if s == 1 { 1 } else { -1 }).collect();
                let cut = graph.cut_value(&spins);
                anyhow::ensure!(
                    cut == solved.objective,
                    "{name}: reported cut {} re-scores as {cut}",
                    solved.objective
                );
                crate::progress::row_done(format!(
                    "{name} limit {limit} s seed {seed}: cut {cut} ({:?}, {} rounds)",
                    solved.status, solved.rounds
                ));
                cuts.push(cut);
                gaps.push(solved.gap.unwrap_or(f64::NAN));
                last = Some(solved);
            }
            cuts.sort_by(f64::total_cmp);
            write!(row, " {} ({}) |", median(&cuts), cuts[0])?;
        }
        let last = last.expect("at least one time limit and seed");
        let to_best = last.history.last().map_or(0.0, |p| p.elapsed_ms / 1e3);
        let limit = Duration::from_secs_f64(baseline_limit);
        let bound = last.bound.map_or("-".into(), |b| format!("{b}"));
        let (gap, worst_gap) = super::median_and_worst(&mut gaps, false);
        let gap = if gap.is_nan() { "-".into() } else { format!("{:.1}% ({:.1}%)", 100.0 * gap, 100.0 * worst_gap) };
        write!(row, " {bound} | {gap} | {to_best:.1} | {} | {} |", last.chains, device_name(config.device))?;
        for baseline in SEARCH_BASELINES {
            crate::progress::figure(format!("measuring {name} baseline {baseline}"));
            let (spins, _) = graph.run_baseline(baseline, limit, config.seeds[0]).expect("a listed baseline");
            let cut = graph.cut_value(&spins);
            crate::progress::row_done(format!("{name} baseline {baseline}: cut {cut}"));
            write!(row, " {cut} |")?;
        }
        if let Some((python, script)) = &config.peer {
            for peer in peers {
                for &limit in &config.time_limits_s {
                    let sizes = (graph.num_nodes(), limit, config.seeds.as_slice());
                    row += &super::peer_sides_cell((python, script), peer, &file, sizes, |sides| {
                        let spins: Vec<i8> = sides.iter().map(|&s| if s == 1 { 1 } else { -1 }).collect();
                        graph.cut_value(&spins)
                    })?;
                }
            }
        }
        row.push('\n');
        report.push_str(&row);
    }
    Ok(report)
}

/// `rlsolver bench maxcut`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_maxcut(&BenchConfig {
        instances: args.instances,
        time_limits_s: args.time_limit,
        seeds: args.seeds.clone(),
        device: rlsolver::problems::parse_device(Some(&args.device))?,
        chains: args.chains,
        peer: args
            .python
            .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/maxcut_peer.py".into()))),
    })
}

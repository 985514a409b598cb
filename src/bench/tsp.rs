//! `rlsolver bench tsp`: every TSPLIB instance of the folder against its optimum (the folder's
//! README table): ours at each time limit over several seeds (median and worst gap), LKH-3 (the
//! peer, through elkai) with the same limit and seeds, our Held-Karp bound's distance below the
//! optimum, and the nearest-neighbour + 2-opt baseline from the same run. Every tour, the peer's
//! included, is re-scored here with the instance's own distances.

use anyhow::{Context, Result};
use rlsolver::problems::tsp;
use rlsolver::problems::{Instance, Limits, Models, ProblemInput};
use rlsolver::search::SearchParams;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct TspBenchConfig {
    pub data: PathBuf,
    pub time_limits_s: Vec<f64>,
    pub seeds: Vec<u64>,
    /// Python with elkai and the LKH peer script (benches/peers/lkh_peer.py); None: ours only.
    pub peer: Option<(PathBuf, PathBuf)>,
}

/// What the LKH peer returns.
#[derive(serde::Deserialize)]
struct PeerTour {
    tour: Vec<i64>,
    seconds: f64,
}

/// "median (worst)" of `values`, worst the largest.
fn cell(values: &mut [f64]) -> String {
    let (median, worst) = super::median_and_worst(values, false);
    format!("{median:.2} ({worst:.2})")
}

impl TspBenchConfig {
    pub fn in_folder(data: &Path) -> Self {
        TspBenchConfig { data: data.to_path_buf(), time_limits_s: vec![10.0, 60.0], seeds: vec![0, 1, 2], peer: None }
    }
}

/// (instance, optimum) rows of the folder's README table `| name | cities | optimum | ... |`.
pub fn optima(readme: &str) -> Vec<(String, f64)> {
    readme
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            (cells.len() > 4).then_some(())?;
            let optimum: f64 = cells[3].parse().ok()?;
            cells[2].parse::<usize>().ok()?;
            Some((cells[1].to_string(), optimum))
        })
        .collect()
}

pub fn run_tsp(config: &TspBenchConfig) -> Result<String> {
    let readme = std::fs::read_to_string(config.data.join("README.md")).context("the folder's README.md")?;
    let registry = rlsolver::models::ModelRegistry::empty(rlsolver::problems::policy_loaders);
    let models = Models { registry: &registry, requested: None };
    let mut report = String::new();
    let peer_columns = if config.peer.is_some() { 2 } else { 0 };
    let columns: String = config
        .time_limits_s
        .iter()
        .map(|t| {
            let peer = if config.peer.is_some() {
                format!(" LKH-3 {t} s: gap % | LKH-3 {t} s: wall s |")
            } else {
                String::new()
            };
            format!(" ours {t} s: gap % |{peer}")
        })
        .collect();
    writeln!(report, "| instance | cities | optimum |{columns} Held-Karp bound: % below optimum | nn + 2-opt gap % |")?;
    writeln!(report, "|---|---|---|{}---|---|", "---|".repeat(config.time_limits_s.len() * (1 + peer_columns)))?;
    for (name, optimum) in optima(&readme) {
        let path = config.data.join(format!("{name}.tsp"));
        let Ok(text) = std::fs::read_to_string(&path) else {
            crate::progress::line(format!("{}: missing, skipped", path.display()));
            continue;
        };
        let instance = tsp::load(ProblemInput::Text(&text), &Limits::default())?;
        let gap = |length: f64| 100.0 * (length - optimum) / optimum;
        let mut cells = String::new();
        let mut bound_below = f64::NAN;
        for &t in &config.time_limits_s {
            crate::progress::figure(format!("measuring {name} at {t} s"));
            let mut gaps = Vec::new();
            for &seed in &config.seeds {
                let solved = instance.solve(&SearchParams { time_limit_s: t, seed, ..SearchParams::default() }, models);
                if let Some(bound) = solved.bound {
                    bound_below = 100.0 * (optimum - bound) / optimum;
                }
                gaps.push(gap(solved.objective));
            }
            crate::progress::row_done(format!("{name} {t} s: {gaps:?}"));
            write!(cells, " {} |", cell(&mut gaps))?;
            if let Some((python, script)) = &config.peer {
                let (mut peer_gaps, mut walls) = (Vec::new(), Vec::new());
                for &seed in &config.seeds {
                    crate::progress::figure(format!("measuring LKH-3 on {name} at {t} s, seed {seed}"));
                    let args = [path.to_string_lossy().to_string(), t.to_string(), seed.to_string()];
                    let run: PeerTour = super::run_peer(python, script, &args)?;
                    peer_gaps.push(gap(peer_length(&instance, &run.tour).with_context(|| format!("LKH-3 on {name}"))?));
                    walls.push(run.seconds);
                }
                write!(cells, " {} | {} |", cell(&mut peer_gaps), cell(&mut walls))?;
            }
        }
        let baseline = instance.solve_baseline("nn-2opt", &SearchParams::default(), models)?;
        writeln!(
            report,
            "| {name} | {} | {optimum} |{cells} {bound_below:.2} | {:.2} |",
            instance.num_cities(),
            gap(baseline.objective)
        )?;
    }
    writeln!(
        report,
        "\nGaps in percent above the optimum, median (worst) over seeds {:?}; LKH-3: elkai 2.0.1 with RUNS = 1, the same \
         TIME_LIMIT and SEED (benches/peers/lkh_peer.py), its wall time including its preprocessing. The Held-Karp bound is \
         the one our answer at the last limit reports (\"NaN\": skipped at that size).",
        config.seeds
    )?;
    Ok(report)
}

/// The length of a tour given as node ids, checked to visit every city once.
fn peer_length(instance: &tsp::Tsp, tour: &[i64]) -> Result<f64> {
    let index: std::collections::HashMap<i64, u32> =
        instance.ids.iter().enumerate().map(|(k, &id)| (id, k as u32)).collect();
    let order: Vec<u32> =
        tour.iter().map(|id| index.get(id).copied()).collect::<Option<_>>().context("an unknown city id")?;
    let mut seen = vec![false; order.len()];
    order.iter().for_each(|&c| seen[c as usize] = true);
    anyhow::ensure!(order.len() == instance.num_cities() && seen.iter().all(|&s| s), "not a tour of every city");
    Ok(tsp::tour::tour_length(&order, &instance.distances))
}

/// `rlsolver bench tsp`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_tsp(&TspBenchConfig {
        time_limits_s: args.time_limit,
        seeds: args.seeds,
        peer: args
            .python
            .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/lkh_peer.py".into()))),
        ..TspBenchConfig::in_folder(&args.instances)
    })
}

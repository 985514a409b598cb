//! `rlsolver bench tsp`: every TSPLIB instance of the folder against its optimum (the folder's
//! README table): ours at each time limit over several seeds (median and worst gap), and the
//! nearest-neighbour + 2-opt baseline from the same run.

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
}

impl TspBenchConfig {
    pub fn in_folder(data: &Path) -> Self {
        TspBenchConfig { data: data.to_path_buf(), time_limits_s: vec![10.0, 60.0], seeds: vec![0, 1, 2] }
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
    let columns: String = config.time_limits_s.iter().map(|t| format!(" ours {t} s: gap % median (worst) |")).collect();
    writeln!(report, "| instance | cities | optimum |{columns} nn + 2-opt gap % |")?;
    writeln!(report, "|---|---|---|{}---|", "---|".repeat(config.time_limits_s.len()))?;
    for (name, optimum) in optima(&readme) {
        let path = config.data.join(format!("{name}.tsp"));
        let Ok(text) = std::fs::read_to_string(&path) else {
            crate::progress::line(format!("{}: missing, skipped", path.display()));
            continue;
        };
        let instance = tsp::load(ProblemInput::Text(&text), &Limits::default())?;
        let gap = |length: f64| 100.0 * (length - optimum) / optimum;
        let mut cells = String::new();
        for &t in &config.time_limits_s {
            crate::progress::figure(format!("measuring {name} at {t} s"));
            let mut gaps: Vec<f64> = config
                .seeds
                .iter()
                .map(|&seed| {
                    gap(instance
                        .solve(&SearchParams { time_limit_s: t, seed, ..SearchParams::default() }, models)
                        .objective)
                })
                .collect();
            gaps.sort_by(f64::total_cmp);
            crate::progress::row_done(format!("{name} {t} s: {gaps:?}"));
            write!(cells, " {:.2} ({:.2}) |", super::median(&gaps), gaps.last().copied().unwrap_or(f64::NAN))?;
        }
        let baseline = instance.solve_baseline("nn-2opt", &SearchParams::default(), models)?;
        writeln!(report, "| {name} | {} | {optimum} |{cells} {:.2} |", instance.num_cities(), gap(baseline.objective))?;
    }
    Ok(report)
}

/// `rlsolver bench tsp`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_tsp(&TspBenchConfig {
        time_limits_s: args.time_limit,
        seeds: args.seeds,
        ..TspBenchConfig::in_folder(&args.instances)
    })
}

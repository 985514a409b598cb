//! `rlsolver bench nphard`: the classical NP-hard problems on the shared benchmark sets with
//! proven optima, through the same load-and-solve path as a request. Ours runs once per seed at
//! the longest limit with the optimum as its target; the anytime history gives the objective at
//! each shorter limit, and the time to the optimum (median and worst over the seeds). Each
//! baseline runs at every limit with the first seed. Suites: BHOSLIB independent sets (`mis/`),
//! 0/1 knapsack (`knapsack/`) and OR-Library set cover (`setcover/`).

use crate::models::ModelRegistry;
use crate::problems::{Limits, Models, ProblemInput, SolveReport};
use crate::search::SearchParams;
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct NphardBenchConfig {
    /// The folder holding `mis/` (BHOSLIB graphs, optima in its README).
    pub data: PathBuf,
    pub time_limits_s: Vec<f64>,
    pub seeds: Vec<u64>,
}

/// The README row `| name | n | m | value | ... |`: the value in column `column`.
fn optimum(readme: &str, name: &str, column: usize) -> Option<f64> {
    readme.lines().find_map(|line| {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
        (cells.first() == Some(&name)).then(|| cells.get(column)?.parse().ok()).flatten()
    })
}

/// Files of `dir` with extension `ext`, by name.
fn files(dir: &Path, ext: &str) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    Ok(files)
}

/// The best objective reached within `seconds` (None: nothing by then).
fn at(report: &SolveReport, seconds: f64, maximize: bool) -> Option<f64> {
    let reached = report.history.iter().filter(|p| p.elapsed_ms <= seconds * 1e3).map(|p| p.objective);
    if maximize {
        reached.fold(None, |best: Option<f64>, v| Some(best.map_or(v, |b| b.max(v))))
    } else {
        reached.fold(None, |best: Option<f64>, v| Some(best.map_or(v, |b| b.min(v))))
    }
}

fn median(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// One problem's rows: each instance file solved by `problem` with the given optimum.
struct Suite<'a> {
    problem: &'static str,
    label: &'a str,
    maximize: bool,
    /// Run at every limit.
    baseline: &'a str,
    /// An exact method, run once: its value and time.
    exact: Option<&'a str>,
}

fn run_suite(
    config: &NphardBenchConfig,
    suite: &Suite<'_>,
    instances: &[(String, String, f64)],
    report: &mut String,
) -> Result<()> {
    let problem = crate::problems::find(suite.problem).map_err(|e| anyhow::anyhow!("{e}"))?;
    let registry = ModelRegistry::empty(crate::problems::policy_loaders);
    let models = Models { registry: &registry, requested: None };
    let longest = config.time_limits_s.iter().copied().fold(0.0, f64::max);
    for (name, text, best) in instances {
        let instance =
            problem.load(ProblemInput::Text(text), &Limits::default()).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let mut cells: Vec<Vec<f64>> = vec![Vec::new(); config.time_limits_s.len()];
        let mut to_optimum = Vec::new();
        for &seed in &config.seeds {
            let params = SearchParams {
                time_limit_s: longest,
                seed,
                target_energy: Some(instance.target_energy(*best)),
                ..SearchParams::default()
            };
            let solved = instance.solve(&params, models);
            for (k, &limit) in config.time_limits_s.iter().enumerate() {
                let value = at(&solved, limit, suite.maximize).unwrap_or(f64::NAN);
                cells[k].push(value);
            }
            let hit = solved.history.iter().find(|p| p.objective == *best).map(|p| p.elapsed_ms / 1e3);
            eprintln!(
                "{} {name} seed {seed}: {} ({:?}), optimum at {hit:?} s",
                suite.problem, solved.objective, solved.status
            );
            to_optimum.push(hit.unwrap_or(f64::INFINITY));
        }
        let mut row = format!("| {} | {name} | {best} |", suite.label);
        for values in &mut cells {
            // Worst first in the sort order of the objective.
            values.sort_by(|a, b| if suite.maximize { a.total_cmp(b) } else { b.total_cmp(a) });
            write!(row, " {} ({}) |", median(values), values[0])?;
        }
        to_optimum.sort_by(f64::total_cmp);
        let shown = |t: f64| if t.is_finite() { format!("{t:.2}") } else { "not reached".to_string() };
        write!(row, " {} ({}) |", shown(median(&to_optimum)), shown(*to_optimum.last().expect("a seed")))?;
        for &limit in &config.time_limits_s {
            let params = SearchParams { time_limit_s: limit, seed: config.seeds[0], ..SearchParams::default() };
            let solved =
                instance.solve_baseline(suite.baseline, &params, models).map_err(|e| anyhow::anyhow!("{e}"))?;
            eprintln!("{} {name} {} {limit} s: {}", suite.problem, suite.baseline, solved.objective);
            write!(row, " {} |", solved.objective)?;
        }
        match suite.exact {
            Some(method) => {
                let params = SearchParams { time_limit_s: longest, ..SearchParams::default() };
                let solved = instance.solve_baseline(method, &params, models).map_err(|e| anyhow::anyhow!("{e}"))?;
                write!(row, " {method}: {} in {:.3} s |", solved.objective, solved.elapsed_ms / 1e3)?;
            }
            None => row.push_str(" - |"),
        }
        row.push('\n');
        report.push_str(&row);
    }
    Ok(())
}

/// Runs every suite whose data is present and returns the markdown report.
pub fn run_nphard(config: &NphardBenchConfig) -> Result<String> {
    anyhow::ensure!(!config.seeds.is_empty() && !config.time_limits_s.is_empty(), "need a seed and a time limit");
    let limits: String = config.time_limits_s.iter().map(|t| format!(" ours {t} s |")).collect();
    let baseline: String = config.time_limits_s.iter().map(|t| format!(" baseline {t} s |")).collect();
    let mut report = String::new();
    writeln!(
        report,
        "| problem | instance | optimum |{limits} time to optimum (s) |{baseline} exact |\n|---|---|---|{}---|{}---|",
        "---|".repeat(config.time_limits_s.len()),
        "---|".repeat(config.time_limits_s.len())
    )?;
    let mis = config.data.join("mis");
    let readme =
        std::fs::read_to_string(mis.join("README.md")).with_context(|| format!("{}/README.md", mis.display()))?;
    let mut graphs = Vec::new();
    for file in files(&mis, "mis")? {
        let name = file.file_stem().unwrap_or_default().to_string_lossy().to_string();
        let best = optimum(&readme, &name, 3).with_context(|| format!("no optimum for {name} in the README"))?;
        graphs.push((name, std::fs::read_to_string(&file)?, best));
    }
    let suite = Suite {
        problem: "max_independent_set",
        label: "independent set",
        maximize: true,
        baseline: "greedy",
        exact: None,
    };
    run_suite(config, &suite, &graphs, &mut report)?;
    let knapsack = config.data.join("knapsack");
    let readme = std::fs::read_to_string(knapsack.join("README.md"))
        .with_context(|| format!("{}/README.md", knapsack.display()))?;
    let mut items = Vec::new();
    for file in files(&knapsack, "txt")? {
        let name = file.file_stem().unwrap_or_default().to_string_lossy().to_string();
        let best = optimum(&readme, &name, 3).with_context(|| format!("no optimum for {name} in the README"))?;
        items.push((name, std::fs::read_to_string(&file)?, best));
    }
    let suite = Suite { problem: "knapsack", label: "knapsack", maximize: true, baseline: "greedy", exact: Some("dp") };
    run_suite(config, &suite, &items, &mut report)?;
    let setcover = config.data.join("setcover");
    let readme = std::fs::read_to_string(setcover.join("README.md"))
        .with_context(|| format!("{}/README.md", setcover.display()))?;
    let mut covers = Vec::new();
    for file in files(&setcover, "txt")? {
        let name = file.file_stem().unwrap_or_default().to_string_lossy().to_string();
        let best = optimum(&readme, &name, 5).with_context(|| format!("no optimum for {name} in the README"))?;
        covers.push((name, std::fs::read_to_string(&file)?, best));
    }
    let suite = Suite { problem: "set_cover", label: "set cover", maximize: false, baseline: "greedy", exact: None };
    run_suite(config, &suite, &covers, &mut report)?;
    writeln!(
        report,
        "\nCells: median (worst) over seeds {:?}; the time to optimum is the median (worst). Baselines: \
         independent sets greedy (GWMIN restarts), knapsack greedy by ratio, set cover Chvatal's greedy; exact: knapsack's dynamic \
         programme (method dp). Vertex cover \
         and clique run the same search (a cover is the complement of an independent set, a clique an \
         independent set of the complement).",
        config.seeds
    )?;
    Ok(report)
}

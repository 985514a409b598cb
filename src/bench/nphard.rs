//! `rlsolver bench nphard`: the classical NP-hard problems on the shared benchmark sets with
//! proven optima, through the same load-and-solve path as a request. Ours runs once per seed at
//! the longest limit with the optimum as its target; the anytime history gives the objective at
//! each shorter limit, and the time to the optimum (median and worst over the seeds). Each
//! baseline runs at every limit with the first seed. Suites: BHOSLIB independent sets (`mis/`),
//! 0/1 knapsack (`knapsack/`) and OR-Library set cover (`setcover/`) from the shared data, and
//! generated ones (the generators of `rlsolver generate`, seeds fixed here): number partitioning at
//! the hard phase b = n, graph colouring with a planted colouring and clique (the optimum is
//! known), and bisection of graphs with two planted halves (the planted cut bounds the optimum).

use super::median;
use anyhow::{Context, Result};
use rlsolver::models::ModelRegistry;
use rlsolver::problems::{graph, graph_partitioning, independent_set, number_partitioning};
use rlsolver::problems::{Limits, Models, ProblemInput, SolveReport};
use rlsolver::search::SearchParams;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct NphardBenchConfig {
    /// The folder holding `mis/` (BHOSLIB graphs, optima in its README).
    pub data: PathBuf,
    pub time_limits_s: Vec<f64>,
    pub seeds: Vec<u64>,
    /// Only the suites of these problems (empty: all); `knapsack-classes` names the section of
    /// Pisinger's generated classes, `set-cover-peers` the OR-Library covers against the MIP peers,
    /// `graph-peers` the independent sets, colourings and bisections against them, and
    /// `knapsack-ranges` (only when named) the classes at wider coefficient ranges.
    pub only: Vec<String>,
    /// Python with ortools and highspy, and the MIP peer script (benches/peers/mip_peer.py):
    /// CP-SAT and HiGHS on the generated knapsack classes (None: ours only).
    pub peer: Option<(PathBuf, PathBuf)>,
}

/// Items of the generated knapsack classes.
const CLASS_SIZES: [usize; 2] = [1_000, 10_000];
/// Their coefficient range R.
const CLASS_RANGE: u64 = 1_000;
/// The wider coefficient ranges of the range section, at the larger class size.
const WIDE_RANGES: [u64; 2] = [10_000, 100_000];
/// The highest column cost of the generated set covers (OR-Library's).
const COVER_COST_RANGE: u64 = 100;
/// Threads of each MIP peer (this machine's two cores).
const PEER_THREADS: usize = 2;

/// A MIP peer's answer on one instance.
#[derive(serde::Deserialize)]
struct PeerRun {
    value: Option<f64>,
    optimal: bool,
    seconds: f64,
}

/// "k/N proven, median (worst) s" of runs (proven, seconds).
fn proof_cell(runs: &[(bool, f64)]) -> String {
    let proven = runs.iter().filter(|r| r.0).count();
    let mut seconds: Vec<f64> = runs.iter().map(|r| r.1).collect();
    let (median, worst) = super::median_and_worst(&mut seconds, false);
    format!("{proven}/{} · {median:.3} ({worst:.3})", runs.len())
}

/// One row of a peer section: its label cells and one instance text per seed.
struct PeerRow {
    label: String,
    texts: Vec<(u64, String)>,
}

/// How a peer section's objective compares.
#[derive(Clone, Copy)]
enum Sense {
    Maximize,
    Minimize,
}

/// Rows comparing our default solve of `problem` with the MIP peers (`kind` in the peer script)
/// at the longest limit: per row, runs proven optimal and wall seconds (loading included), and how
/// far each peer's value fell behind ours at most.
fn peer_rows(
    config: &NphardBenchConfig,
    (problem, sense): (&str, Sense),
    kind: &str,
    label_header: &str,
    rows: Vec<PeerRow>,
    report: &mut String,
) -> Result<()> {
    let longest = config.time_limits_s.iter().copied().fold(0.0, f64::max);
    let solver = rlsolver::problems::find(problem).map_err(|e| anyhow::anyhow!("{e}"))?;
    let registry = ModelRegistry::empty(rlsolver::problems::policy_loaders);
    let models = Models { registry: &registry, requested: None };
    let peers: &[&str] = if config.peer.is_some() { &["cpsat", "highs"] } else { &[] };
    let header: String = peers.iter().map(|p| format!(" {p}: proven · s | {p}: behind ours |")).collect();
    let columns = label_header.matches('|').count() + 1;
    writeln!(
        report,
        "\n| {label_header} | ours: proven · s | ours: median value |{header}\n|{}---|---|{}",
        "---|".repeat(columns),
        "---|---|".repeat(peers.len())
    )?;
    let dir = std::env::temp_dir().join(format!("rlsolver-{kind}-peers-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    for PeerRow { label, texts } in rows {
        let mut ours = Vec::new();
        let mut values = Vec::new();
        let mut peer_runs: Vec<Vec<(bool, f64)>> = vec![Vec::new(); peers.len()];
        let mut behind: Vec<f64> = vec![f64::NEG_INFINITY; peers.len()];
        for (seed, text) in &texts {
            crate::progress::figure(format!("measuring {problem} {label}, seed {seed}"));
            let start = std::time::Instant::now();
            let instance =
                solver.load(ProblemInput::Text(text), &Limits::default()).map_err(|e| anyhow::anyhow!("{e}"))?;
            let params = SearchParams { time_limit_s: longest, seed: *seed, ..SearchParams::default() };
            let solved = instance.solve(&params, models);
            ours.push((solved.status == rlsolver::search::StopReason::Optimal, start.elapsed().as_secs_f64()));
            values.push(solved.objective);
            if let Some((python, script)) = &config.peer {
                let file = dir.join(format!("instance-{seed}.txt"));
                std::fs::write(&file, text)?;
                for (k, peer) in peers.iter().enumerate() {
                    let file = file.to_string_lossy().to_string();
                    let args = [kind, peer, &file, &longest.to_string(), &PEER_THREADS.to_string(), &seed.to_string()]
                        .map(String::from);
                    let run: PeerRun = super::run_peer(python, script, &args)?;
                    peer_runs[k].push((run.optimal, run.seconds));
                    // No answer at all counts as behind by the whole of ours.
                    let gap = match (run.value, sense) {
                        (Some(v), Sense::Maximize) => solved.objective - v,
                        (Some(v), Sense::Minimize) => v - solved.objective,
                        (None, _) => solved.objective.abs(),
                    };
                    behind[k] = behind[k].max(gap);
                }
            }
            crate::progress::row_done(format!("{problem} {label} seed {seed}: {}", solved.objective));
        }
        let cells: String =
            peer_runs.iter().zip(&behind).map(|(runs, b)| format!(" {} | {b} |", proof_cell(runs))).collect();
        values.sort_by(f64::total_cmp);
        let row = format!("| {label} | {} | {} |{cells}", proof_cell(&ours), median(&values));
        // The row in the log too: a long section's finished rows outlive a failure after them.
        crate::progress::row_done(row.clone());
        writeln!(report, "{row}")?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// One generated knapsack instance per seed: Pisinger's `class` at `n` items and range `range`.
fn knapsack_row(config: &NphardBenchConfig, class: usize, n: usize, range: u64, label: String) -> Result<PeerRow> {
    use rlsolver::problems::knapsack::generate::generate;
    let texts = config
        .seeds
        .iter()
        .map(|&seed| Ok((seed, generate(n, class, range, seed).map_err(|e| anyhow::anyhow!(e))?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(PeerRow { label, texts })
}

/// Pisinger's classes generated at `CLASS_SIZES` items (range `CLASS_RANGE`, one instance per
/// seed): our default solve (the exact core programme) against CP-SAT and HiGHS.
fn knapsack_classes(config: &NphardBenchConfig, report: &mut String) -> Result<()> {
    use rlsolver::problems::knapsack::generate::CLASSES;
    if !config.only.is_empty() && !config.only.iter().any(|p| p == "knapsack-classes") {
        return Ok(());
    }
    let mut rows = Vec::new();
    for class in CLASSES {
        for n in CLASS_SIZES {
            rows.push(knapsack_row(config, class, n, CLASS_RANGE, format!("{class} | {n}"))?);
        }
    }
    peer_rows(config, ("knapsack", Sense::Maximize), "knapsack", "knapsack class | items", rows, report)?;
    let longest = config.time_limits_s.iter().copied().fold(0.0, f64::max);
    writeln!(
        report,
        "\nGenerated by `rlsolver generate knapsack --class C --nodes N --range {CLASS_RANGE} --seed S` for seeds {:?} \
         (Pisinger 2005's classes; capacity half the total weight). Proven: runs that proved their answer optimal; s: wall \
         seconds including loading, median (worst); behind ours: the most a peer's value fell short of ours. Peers: CP-SAT \
         and HiGHS with {PEER_THREADS} threads and the {longest} s limit (benches/peers/mip_peer.py; HiGHS with no MIP gap).",
        config.seeds
    )?;
    Ok(())
}

/// Pisinger's classes at the larger class size and each of `WIDE_RANGES` (run only when `--only`
/// names `knapsack-ranges`): where the Dantzig bound of a state stays about R/10 above the optimum
/// on the correlated classes, and the cardinality bound and the pairing have to close the proof.
fn knapsack_ranges(config: &NphardBenchConfig, report: &mut String) -> Result<()> {
    use rlsolver::problems::knapsack::generate::CLASSES;
    if !config.only.iter().any(|p| p == "knapsack-ranges") {
        return Ok(());
    }
    let n = CLASS_SIZES[CLASS_SIZES.len() - 1];
    let mut rows = Vec::new();
    for range in WIDE_RANGES {
        for class in CLASSES {
            rows.push(knapsack_row(config, class, n, range, format!("{class} | {range}"))?);
        }
    }
    peer_rows(config, ("knapsack", Sense::Maximize), "knapsack", "knapsack class | range R", rows, report)?;
    writeln!(
        report,
        "\nGenerated by `rlsolver generate knapsack --class C --nodes {n} --range R --seed S` for seeds {:?}. Proven: runs \
         that proved their answer optimal; s: wall seconds including loading, median (worst).",
        config.seeds
    )?;
    Ok(())
}

/// The shared OR-Library set covers and OR-Library's classes generated per seed: our default
/// solve (proven by its branch and bound where it can) against CP-SAT and HiGHS, each seed a run.
fn set_cover_peers(config: &NphardBenchConfig, report: &mut String) -> Result<()> {
    use rlsolver::problems::set_cover::generate::{generate, CLASSES};
    if !config.only.is_empty() && !config.only.iter().any(|p| p == "set-cover-peers") {
        return Ok(());
    }
    let mut rows = Vec::new();
    for file in files(&config.data.join("setcover"), "txt")? {
        let text = std::fs::read_to_string(&file)?;
        let label = file.file_stem().unwrap_or_default().to_string_lossy().to_string();
        rows.push(PeerRow { label, texts: config.seeds.iter().map(|&seed| (seed, text.clone())).collect() });
    }
    for (class, m, n, density) in CLASSES {
        let texts = config
            .seeds
            .iter()
            .map(|&seed| Ok((seed, generate(m, n, density, COVER_COST_RANGE, seed).map_err(|e| anyhow::anyhow!(e))?)))
            .collect::<Result<Vec<_>>>()?;
        rows.push(PeerRow { label: format!("class {class} ({m} x {n}, {density}%)"), texts });
    }
    peer_rows(config, ("set_cover", Sense::Minimize), "setcover", "set cover", rows, report)?;
    let longest = config.time_limits_s.iter().copied().fold(0.0, f64::max);
    writeln!(
        report,
        "\nOR-Library set covers, then OR-Library's classes generated by `rlsolver generate set_cover --nodes M --edges N \
         --class DENSITY --range {COVER_COST_RANGE} --seed S` (one instance per seed), seeds {:?}, no target: ours stops \
         when its branch and bound proves a cover optimal, or at the {longest} s limit. Proven: runs that proved their \
         answer optimal; s: wall seconds including loading, median (worst); behind ours: the most a peer's cost exceeded \
         ours. Peers: CP-SAT and HiGHS with {PEER_THREADS} threads (benches/peers/mip_peer.py; HiGHS with no MIP gap); \
         our branch and bound runs on one thread.",
        config.seeds
    )?;
    Ok(())
}

/// The graph problems against the MIP peers, each seed a run of our default solve: BHOSLIB's
/// independent sets from the shared data, and the generated colourings and bisections of the
/// main table. Number partitioning has no peer row: its numbers (n bits for n numbers) exceed
/// what HiGHS's doubles hold exactly (2^53) and CP-SAT's 64-bit sums from n = 57 on.
fn graph_peers(config: &NphardBenchConfig, report: &mut String) -> Result<()> {
    if !config.only.is_empty() && !config.only.iter().any(|p| p == "graph-peers") {
        return Ok(());
    }
    let per_seed = |text: &str| config.seeds.iter().map(|&seed| (seed, text.to_string())).collect::<Vec<_>>();
    let mut sets = Vec::new();
    for file in files(&config.data.join("mis"), "mis")? {
        let label = file.file_stem().unwrap_or_default().to_string_lossy().to_string();
        sets.push(PeerRow { label, texts: per_seed(&std::fs::read_to_string(&file)?) });
    }
    let mut colourings = Vec::new();
    let mut bisections = Vec::new();
    for (suite, instances) in generated_suites()? {
        for instance in instances {
            let Input::Text(text) = &instance.input else { continue };
            let row = PeerRow { label: instance.name.clone(), texts: per_seed(text) };
            match suite.problem {
                "max_independent_set" => sets.push(row),
                "graph_coloring" => colourings.push(row),
                "graph_partitioning" => bisections.push(row),
                _ => {}
            }
        }
    }
    peer_rows(config, ("max_independent_set", Sense::Maximize), "mis", "independent set", sets, report)?;
    peer_rows(config, ("graph_coloring", Sense::Minimize), "coloring", "colouring", colourings, report)?;
    peer_rows(config, ("graph_partitioning", Sense::Minimize), "bisection", "bisection", bisections, report)?;
    let longest = config.time_limits_s.iter().copied().fold(0.0, f64::max);
    writeln!(
        report,
        "\nIndependent sets (BHOSLIB and generated model RB graphs), colourings and bisections (the generated rows of the \
         main table), seeds {:?}, no target: each run at the {longest} s limit. Proven: runs that proved their answer \
         optimal; s: wall seconds including loading, median (worst); behind ours: the most a peer's value fell short of \
         ours (negative: the peer was ahead). Peers: CP-SAT and HiGHS with {PEER_THREADS} threads on the natural models \
         (benches/peers/mip_peer.py: edge constraints; colour assignment with as many colours as a largest-first greedy \
         colouring; |x_u - x_v| per edge under a balance row). Number partitioning has no peer row: its numbers exceed \
         the doubles HiGHS computes in and CP-SAT's 64-bit sums.",
        config.seeds
    )?;
    Ok(())
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

/// What a row compares against.
#[derive(Clone, Copy)]
enum Known {
    /// A proven optimum (the search stops there).
    Optimum(f64),
    /// A planted solution's value: the optimum is at least as good (the search runs on).
    Planted(f64),
    /// None given: proved by our search when it finishes (number partitioning's sweep).
    Proved,
}

enum Input {
    Text(String),
    Json(serde_json::Value),
}

struct BenchInstance {
    name: String,
    input: Input,
    known: Known,
}

impl BenchInstance {
    fn text(name: String, text: String, optimum: f64) -> Self {
        BenchInstance { name, input: Input::Text(text), known: Known::Optimum(optimum) }
    }
}

/// One problem's rows: each instance solved by `problem`.
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
    instances: &[BenchInstance],
    report: &mut String,
) -> Result<()> {
    if !config.only.is_empty() && !config.only.iter().any(|p| p == suite.problem) {
        return Ok(());
    }
    let problem = rlsolver::problems::find(suite.problem).map_err(|e| anyhow::anyhow!("{e}"))?;
    let registry = ModelRegistry::empty(rlsolver::problems::policy_loaders);
    let models = Models { registry: &registry, requested: None };
    let longest = config.time_limits_s.iter().copied().fold(0.0, f64::max);
    // At least as good as `value`.
    let reaches = |objective: f64, value: f64| if suite.maximize { objective >= value } else { objective <= value };
    for BenchInstance { name, input, known } in instances {
        let input = match input {
            Input::Text(text) => ProblemInput::Text(text),
            Input::Json(value) => ProblemInput::Json(value),
        };
        let instance = problem.load(input, &Limits::default()).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let mut cells: Vec<Vec<f64>> = vec![Vec::new(); config.time_limits_s.len()];
        let mut runs = Vec::new();
        for &seed in &config.seeds {
            crate::progress::figure(format!("measuring {} {name}, seed {seed}, {longest} s", suite.problem));
            let target_energy = match known {
                Known::Optimum(best) => Some(instance.target_energy(*best)),
                Known::Planted(_) | Known::Proved => None,
            };
            let params = SearchParams { time_limit_s: longest, seed, target_energy, ..SearchParams::default() };
            let solved = instance.solve(&params, models);
            for (k, &limit) in config.time_limits_s.iter().enumerate() {
                cells[k].push(at(&solved, limit, suite.maximize).unwrap_or(f64::NAN));
            }
            crate::progress::row_done(format!(
                "{} {name} seed {seed}: {} ({:?})",
                suite.problem, solved.objective, solved.status
            ));
            runs.push(solved);
        }
        // The value the time is measured to, and the optimum column.
        let (goal, shown_goal) = match known {
            Known::Optimum(best) => (Some(*best), format!("{best}")),
            Known::Planted(value) => (Some(*value), format!("<= {value} (planted)")),
            Known::Proved => match runs.iter().find(|r| r.status == rlsolver::search::StopReason::Optimal) {
                Some(r) => (Some(r.objective), format!("{} (proved by ours)", r.objective)),
                None => (None, "unknown".to_string()),
            },
        };
        let mut to_goal: Vec<f64> = runs
            .iter()
            .map(|r| {
                let hit = goal.and_then(|g| r.history.iter().find(|p| reaches(p.objective, g)));
                hit.map_or(f64::INFINITY, |p| p.elapsed_ms / 1e3)
            })
            .collect();
        let mut row = format!("| {} | {name} | {shown_goal} |", suite.label);
        for values in &mut cells {
            // Worst first in the sort order of the objective.
            values.sort_by(|a, b| if suite.maximize { a.total_cmp(b) } else { b.total_cmp(a) });
            write!(row, " {} ({}) |", median(values), values[0])?;
        }
        to_goal.sort_by(f64::total_cmp);
        let shown = |t: f64| if t.is_finite() { format!("{t:.2}") } else { "not reached".to_string() };
        write!(row, " {} ({}) |", shown(median(&to_goal)), shown(*to_goal.last().expect("a seed")))?;
        for &limit in &config.time_limits_s {
            let params = SearchParams { time_limit_s: limit, seed: config.seeds[0], ..SearchParams::default() };
            let solved =
                instance.solve_baseline(suite.baseline, &params, models).map_err(|e| anyhow::anyhow!("{e}"))?;
            crate::progress::row_done(format!(
                "{} {name} {} {limit} s: {}",
                suite.problem, suite.baseline, solved.objective
            ));
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

/// The generated suites' instances (fixed generator seeds, not the solver's).
fn generated_suites() -> Result<Vec<(Suite<'static>, Vec<BenchInstance>)>> {
    let partitions = [(40, 101), (40, 102), (50, 101), (50, 102), (60, 101)]
        .into_iter()
        .map(|(n, seed)| BenchInstance {
            name: format!("n{n}_b{n}_s{seed}"),
            input: Input::Json(serde_json::json!(number_partitioning::generate(n, n as u32, seed))),
            known: Known::Proved,
        })
        .collect();
    let hidden = [(40, 101), (50, 101), (59, 101)]
        .into_iter()
        .map(|(groups, seed)| {
            let (vertices, d, edges) = independent_set::model_rb::generate(groups, seed);
            let name = format!("rb{groups}-{d}_s{seed}");
            BenchInstance::text(name, graph::to_dimacs(vertices, &edges), groups as f64)
        })
        .collect();
    let mut colorings = Vec::new();
    for (n, k, m, seed) in [(400, 8, 6000, 101), (400, 8, 8000, 102), (1000, 10, 25000, 103)] {
        let edges = graph::planted(n, k, 0, m, true, seed).map_err(|e| anyhow::anyhow!(e))?;
        colorings.push(BenchInstance::text(
            format!("planted_n{n}_k{k}_m{m}_s{seed}"),
            graph::to_dimacs(n, &edges),
            k as f64,
        ));
    }
    let mut bisections = Vec::new();
    for (n, within, cut, seed) in [(1000, 5000, 100, 101), (2000, 8000, 300, 102)] {
        let edges = graph::planted(n, 2, within, cut, false, seed).map_err(|e| anyhow::anyhow!(e))?;
        bisections.push(BenchInstance {
            name: format!("halves_n{n}_m{}_cut{cut}_s{seed}", within + cut),
            input: Input::Text(graph_partitioning::to_metis(n, &edges)),
            known: Known::Planted(cut as f64),
        });
    }
    Ok(vec![
        (
            Suite {
                problem: "max_independent_set",
                label: "independent set (generated)",
                maximize: true,
                baseline: "greedy",
                exact: None,
            },
            hidden,
        ),
        (
            Suite {
                problem: "number_partitioning",
                label: "number partitioning",
                maximize: false,
                baseline: "ckk",
                exact: None,
            },
            partitions,
        ),
        (
            Suite { problem: "graph_coloring", label: "colouring", maximize: false, baseline: "dsatur", exact: None },
            colorings,
        ),
        (
            Suite { problem: "graph_partitioning", label: "bisection", maximize: false, baseline: "bfs", exact: None },
            bisections,
        ),
    ])
}

/// Runs every suite whose data is present and returns the markdown report.
pub fn run_nphard(config: &NphardBenchConfig) -> Result<String> {
    anyhow::ensure!(!config.seeds.is_empty() && !config.time_limits_s.is_empty(), "need a seed and a time limit");
    let sections = ["knapsack-classes", "knapsack-ranges", "set-cover-peers", "graph-peers"];
    if !config.only.is_empty() && config.only.iter().all(|p| sections.contains(&p.as_str())) {
        let mut report = String::new();
        knapsack_classes(config, &mut report)?;
        knapsack_ranges(config, &mut report)?;
        set_cover_peers(config, &mut report)?;
        graph_peers(config, &mut report)?;
        return Ok(report.trim_start().to_string());
    }
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
        graphs.push(BenchInstance::text(name, std::fs::read_to_string(&file)?, best));
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
        items.push(BenchInstance::text(name, std::fs::read_to_string(&file)?, best));
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
        covers.push(BenchInstance::text(name, std::fs::read_to_string(&file)?, best));
    }
    let suite = Suite { problem: "set_cover", label: "set cover", maximize: false, baseline: "greedy", exact: None };
    run_suite(config, &suite, &covers, &mut report)?;
    for (suite, instances) in generated_suites()? {
        run_suite(config, &suite, &instances, &mut report)?;
    }
    knapsack_classes(config, &mut report)?;
    set_cover_peers(config, &mut report)?;
    graph_peers(config, &mut report)?;
    writeln!(
        report,
        "\nCells: median (worst) over seeds {:?}; the time to optimum is the median (worst). Baselines: \
         independent sets greedy (GWMIN restarts), knapsack greedy by ratio, set cover Chvatal's greedy, number \
         partitioning Korf's complete Karmarkar-Karp (ckk, anytime), colouring DSATUR, bisection BFS region growing; exact: \
         knapsack's dynamic programme (method dp). Generated rows (`rlsolver generate`): independent sets rbN-d forced model RB graphs as BHOSLIB's (optimum N); number partitioning n numbers of \
         n bits; colouring n nodes, m edges between k planted classes plus a planted k-clique (so k is optimal); bisection \
         two planted halves with `cut` edges across (the optimum is at most that). Vertex cover \
         and clique run the same search (a cover is the complement of an independent set, a clique an \
         independent set of the complement).",
        config.seeds
    )?;
    Ok(report)
}

/// `rlsolver bench nphard`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_nphard(&NphardBenchConfig {
        data: args.instances,
        time_limits_s: args.time_limit,
        seeds: args.seeds,
        only: args.only,
        peer: args
            .python
            .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/mip_peer.py".into()))),
    })
}

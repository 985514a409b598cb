//! `rlsolver bench tsp`: every TSPLIB instance of the folder against its optimum (the folder's
//! README table): ours at each time limit over several seeds (median and worst gap), LKH-3 (the
//! peer, through elkai) with the same limit and seeds, our Held-Karp bound's distance below the
//! optimum, and the nearest-neighbour + 2-opt baseline from the same run; then, with
//! `--generated`, DIMACS-style random instances (`tsp::generate`) against the shortest tour
//! either side found. Every tour, the peer's included, is re-scored here with the instance's own
//! distances.

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
    /// Generated instances too, as (class, cities): 1 uniform, 2 clustered (`tsp::generate`).
    pub generated: Vec<(usize, usize)>,
    /// The generator's seed for them.
    pub instance_seed: u64,
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
        TspBenchConfig {
            data: data.to_path_buf(),
            time_limits_s: vec![10.0, 60.0],
            seeds: vec![0, 1, 2],
            peer: None,
            generated: Vec::new(),
            instance_seed: 0,
        }
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
    let mut report = String::new();
    writeln!(
        report,
        "| instance | cities | optimum |{} Held-Karp bound: % below optimum | nn + 2-opt gap % |",
        columns(config)
    )?;
    writeln!(report, "{}", rule(config))?;
    for (name, optimum) in optima(&readme) {
        let path = config.data.join(format!("{name}.tsp"));
        if !path.exists() {
            crate::progress::line(format!("{}: missing, skipped", path.display()));
            continue;
        }
        let measured = measure(config, &name, &path)?;
        writeln!(report, "{}", measured.row(&name, optimum))?;
    }
    writeln!(
        report,
        "\nGaps in percent above the optimum, median (worst) over seeds {:?}; LKH-3: elkai 2.0.1 with RUNS = 1, the same \
         SEED and the limit as its TOTAL_TIME_LIMIT, which covers its preprocessing as ours does (benches/peers/lkh_peer.py; \
         \"no tour\": the limit ran out in its preprocessing), its wall time as measured. The Held-Karp bound is the one our \
         answer at the last limit reports (\"NaN\": skipped at that size).",
        config.seeds
    )?;
    if !config.generated.is_empty() {
        let folder = std::env::temp_dir().join(format!("rlsolver-bench-tsp-{}", std::process::id()));
        std::fs::create_dir_all(&folder)?;
        writeln!(
            report,
            "\n| instance | cities | best tour |{} Held-Karp bound: % below best | nn + 2-opt gap % |",
            columns(config)
        )?;
        writeln!(report, "{}", rule(config))?;
        for &(class, cities) in &config.generated {
            let name = format!("{}{cities}", if class == 1 { "E" } else { "C" });
            let text = tsp::generate::generate(cities, class, config.instance_seed).map_err(anyhow::Error::msg)?;
            let path = folder.join(format!("{name}.tsp"));
            std::fs::write(&path, text)?;
            let measured = measure(config, &name, &path)?;
            writeln!(report, "{}", measured.row(&name, measured.best()))?;
        }
        let _ = std::fs::remove_dir_all(&folder);
        writeln!(
            report,
            "\nGenerated instances (`rlsolver generate tsp --nodes N --class 1|2 --seed {}`: E uniform, C clustered, as the \
             DIMACS TSP Challenge's), whose optima are unknown: gaps in percent above the shortest tour any run of either side \
             found, median (worst) over the same seeds.",
            config.instance_seed
        )?;
    }
    Ok(report)
}

/// The per-limit column headers.
fn columns(config: &TspBenchConfig) -> String {
    config
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
        .collect()
}

fn rule(config: &TspBenchConfig) -> String {
    let per_limit = if config.peer.is_some() { 3 } else { 1 };
    format!("|---|---|---|{}---|---|", "---|".repeat(config.time_limits_s.len() * per_limit))
}

/// Every length one instance's runs gave: ours and the peer's per limit and seed, the peer's
/// wall times, our last bound and the baseline's length.
struct Measured {
    cities: usize,
    ours: Vec<Vec<f64>>,
    peer: Vec<(Vec<f64>, Vec<f64>)>,
    bound: Option<f64>,
    baseline: f64,
}

impl Measured {
    fn best(&self) -> f64 {
        let peer = self.peer.iter().flat_map(|(lengths, _)| lengths).filter(|l| l.is_finite());
        self.ours.iter().flatten().chain(peer).copied().fold(f64::INFINITY, f64::min)
    }

    fn row(&self, name: &str, reference: f64) -> String {
        let gap = |length: f64| 100.0 * (length - reference) / reference;
        let mut cells = String::new();
        for (k, ours) in self.ours.iter().enumerate() {
            let mut gaps: Vec<f64> = ours.iter().map(|&l| gap(l)).collect();
            cells += &format!(" {} |", cell(&mut gaps));
            if let Some((lengths, walls)) = self.peer.get(k) {
                // A run without a tour (the limit spent before LKH's search began) is NaN.
                let mut gaps: Vec<f64> = lengths.iter().filter(|l| l.is_finite()).map(|&l| gap(l)).collect();
                let missing = lengths.len() - gaps.len();
                let shown = match missing {
                    0 => cell(&mut gaps),
                    m if m == lengths.len() => "no tour".to_string(),
                    m => format!("{}, {m} without a tour", cell(&mut gaps)),
                };
                cells += &format!(" {shown} | {} |", cell(&mut walls.clone()));
            }
        }
        let below = self.bound.map_or(f64::NAN, |b| 100.0 * (reference - b) / reference);
        format!("| {name} | {} | {reference} |{cells} {below:.2} | {:.2} |", self.cities, gap(self.baseline))
    }
}

/// Ours (and the peer, when configured) on the TSPLIB file `path` at every limit and seed.
fn measure(config: &TspBenchConfig, name: &str, path: &Path) -> Result<Measured> {
    let registry = rlsolver::models::ModelRegistry::empty(rlsolver::problems::policy_loaders);
    let models = Models { registry: &registry, requested: None };
    let text = std::fs::read_to_string(path)?;
    let instance = tsp::load(ProblemInput::Text(&text), &Limits::default())?;
    let mut measured =
        Measured { cities: instance.num_cities(), ours: Vec::new(), peer: Vec::new(), bound: None, baseline: 0.0 };
    for &t in &config.time_limits_s {
        crate::progress::figure(format!("measuring {name} at {t} s"));
        let mut lengths = Vec::new();
        for &seed in &config.seeds {
            let solved = instance.solve(&SearchParams { time_limit_s: t, seed, ..SearchParams::default() }, models);
            measured.bound = solved.bound.or(measured.bound);
            let tour: Vec<i64> = serde_json::from_value(solved.solution["tour"].clone())?;
            lengths.push(rescored_length(&instance, &tour).with_context(|| format!("ours on {name}"))?);
        }
        crate::progress::row_done(format!("{name} {t} s: {lengths:?}"));
        measured.ours.push(lengths);
        if let Some((python, script)) = &config.peer {
            let (mut lengths, mut walls) = (Vec::new(), Vec::new());
            for &seed in &config.seeds {
                crate::progress::figure(format!("measuring LKH-3 on {name} at {t} s, seed {seed}"));
                let args = [path.to_string_lossy().to_string(), t.to_string(), seed.to_string()];
                let run: PeerTour = super::run_peer(python, script, &args)?;
                lengths.push(if run.tour.is_empty() {
                    f64::NAN
                } else {
                    rescored_length(&instance, &run.tour).with_context(|| format!("LKH-3 on {name}"))?
                });
                walls.push(run.seconds);
            }
            crate::progress::row_done(format!("LKH-3 {name} {t} s: {lengths:?}"));
            measured.peer.push((lengths, walls));
        }
    }
    let baseline = instance.solve_baseline("nn-2opt", &SearchParams::default(), models)?;
    let tour: Vec<i64> = serde_json::from_value(baseline.solution["tour"].clone())?;
    measured.baseline = rescored_length(&instance, &tour).context("nn-2opt")?;
    Ok(measured)
}

/// The length of a tour given as node ids (ours or the peer's), checked to visit every city once.
fn rescored_length(instance: &tsp::Tsp, tour: &[i64]) -> Result<f64> {
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
    let generated = args
        .generated
        .iter()
        .map(|name| {
            let class = match name.chars().next() {
                Some('E') => 1,
                Some('C') => 2,
                _ => anyhow::bail!("--generated {name}: E<cities> (uniform) or C<cities> (clustered)"),
            };
            Ok((class, name[1..].parse().with_context(|| format!("--generated {name}: the city count"))?))
        })
        .collect::<Result<_>>()?;
    run_tsp(&TspBenchConfig {
        generated,
        instance_seed: args.seed,
        time_limits_s: args.time_limit,
        seeds: args.seeds,
        peer: args
            .python
            .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/lkh_peer.py".into()))),
        ..TspBenchConfig::in_folder(&args.instances)
    })
}

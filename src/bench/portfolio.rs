//! `rlsolver bench portfolio`: Chang et al.'s cardinality-constrained frontiers (K = 10,
//! eps = 0.01, delta = 1, 50 lambdas) on the OR-Library indices of the folder, scored by the
//! mean percentage error against each index's `portef` UEF: ours over several seeds (median and
//! worst, with the frontier's time), Chang's GA and greedy from the same run, the published
//! figures beside them; the branch and bound's proof per lambda (started from our point, so
//! "proven" means our point is optimal); and the unconstrained frontier against `portef`.

use anyhow::{Context, Result};
use rlsolver::problems::portfolio::{self, branch_bound, frontier, Goal};
use rlsolver::problems::{Instance, Limits, Models};
use rlsolver::search::SearchParams;
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct PortfolioBenchConfig {
    /// Folder holding portK.txt and portefK.txt.
    pub data: PathBuf,
    pub seeds: Vec<u64>,
    /// The whole frontier's budget per run.
    pub time_limit_s: f64,
    /// The branch and bound's budget per lambda.
    pub proof_limit_s: f64,
    /// Every this many portef points is checked against our UEF.
    pub uef_stride: usize,
}

impl PortfolioBenchConfig {
    pub fn in_folder(data: &Path) -> Self {
        PortfolioBenchConfig {
            data: data.to_path_buf(),
            seeds: vec![0, 1, 2],
            time_limit_s: 5.0,
            proof_limit_s: 5.0,
            uef_stride: 10,
        }
    }
}

/// Published mean percentage errors (K = 10): (index, Chang et al.'s GA, PSO as cited).
const PUBLISHED: [(&str, f64, f64); 3] =
    [("port1", 1.0974, 1.0953), ("port2", 2.5424, 2.5417), ("port3", 1.1076, 1.0628)];

struct Run {
    error: f64,
    /// The error over the frontier's distinct non-dominated portfolios (`frontier::efficient`).
    efficient_error: f64,
    /// How many portfolios that set holds.
    efficient: usize,
    /// The error over the non-dominated portfolios the run scored (its `nondominated` list).
    nondominated_error: f64,
    /// How many portfolios that list holds.
    listed: usize,
    seconds: f64,
    /// (lambda, objective) per point.
    points: Vec<(f64, f64)>,
    allocations: Vec<portfolio::qp::Allocation>,
}

fn run(instance: &portfolio::Portfolio, method: &str, seed: u64, time_limit_s: f64) -> Result<Run> {
    let registry = rlsolver::models::ModelRegistry::empty(rlsolver::problems::policy_loaders);
    let models = Models { registry: &registry, requested: None };
    let params = SearchParams { time_limit_s, seed, ..SearchParams::default() };
    let started = Instant::now();
    let report = match method {
        "search" => instance.solve(&params, models),
        baseline => instance.solve_baseline(baseline, &params, models)?,
    };
    let seconds = started.elapsed().as_secs_f64();
    let list = report.solution["frontier"].as_array().context("a frontier")?;
    let mut points = Vec::new();
    let mut allocations = Vec::new();
    for p in list {
        let lambda = p["lambda"].as_f64().context("lambda")?;
        let assets: Vec<usize> = serde_json::from_value(p["assets"].clone())?;
        let weights: Vec<f64> = serde_json::from_value(p["weights"].clone())?;
        let a = instance.allocation(assets, weights, &Goal::Tradeoff(lambda));
        points.push((lambda, a.objective));
        allocations.push(a);
    }
    let pairs: Vec<(f64, f64)> = allocations.iter().map(|a| (a.expected_return, a.variance)).collect();
    let uef = instance.reference.as_ref().context("the portef frontier")?;
    let error = frontier::mean_percentage_error(&pairs, uef).context("an error")?;
    let efficient: Vec<(f64, f64)> =
        frontier::efficient(&allocations).iter().map(|a| (a.expected_return, a.variance)).collect();
    let efficient_error = frontier::mean_percentage_error(&efficient, uef).context("an error")?;
    // Each listed portfolio re-scored from its weights.
    let mut listed = Vec::new();
    for p in report.solution["nondominated"].as_array().context("the non-dominated list")? {
        let assets: Vec<usize> = serde_json::from_value(p["assets"].clone())?;
        let weights: Vec<f64> = serde_json::from_value(p["weights"].clone())?;
        let feasible = assets.len() <= instance.constraints.cardinality.unwrap_or(assets.len())
            && (weights.iter().sum::<f64>() - 1.0).abs() < 1e-6
            && assets
                .iter()
                .zip(&weights)
                .all(|(&i, &w)| w >= instance.constraints.lower[i] - 1e-7 && w <= instance.constraints.upper[i] + 1e-7);
        anyhow::ensure!(feasible, "{method}: a listed portfolio breaks the constraints: {assets:?} {weights:?}");
        let a = instance.allocation(assets, weights, &Goal::Tradeoff(0.5));
        listed.push((a.expected_return, a.variance));
    }
    let nondominated_error = frontier::mean_percentage_error(&listed, uef).context("an error")?;
    Ok(Run {
        error,
        efficient_error,
        efficient: efficient.len(),
        nondominated_error,
        listed: listed.len(),
        seconds,
        points,
        allocations,
    })
}

pub fn run_portfolio(config: &PortfolioBenchConfig) -> Result<String> {
    let mut table = String::new();
    let mut proofs = String::new();
    let mut uef_rows = String::new();
    writeln!(
        table,
        "| index | N | ours: error median (worst) | ours, efficient set: error median (worst) | efficient portfolios, median | ours, non-dominated: error median (worst) | non-dominated portfolios, median | ours: s median | GA error: per lambda / efficient set | GA s | greedy error: per lambda / efficient set | greedy s | published GA | published PSO |"
    )?;
    writeln!(table, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")?;
    writeln!(
        proofs,
        "| index | lambdas proven optimal | ours equal to the proof's optimum | largest gap left | nodes | s |"
    )?;
    writeln!(proofs, "|---|---|---|---|---|---|")?;
    writeln!(uef_rows, "| index | portef points checked | largest variance deviation | largest return deviation |")?;
    writeln!(uef_rows, "|---|---|---|---|")?;
    for (name, published_ga, published_pso) in PUBLISHED {
        let k = &name[4..];
        let port = config.data.join(format!("port{k}.txt"));
        let portef = config.data.join(format!("portef{k}.txt"));
        if !port.exists() {
            crate::progress::line(format!("{}: missing, skipped", port.display()));
            continue;
        }
        let text = std::fs::read_to_string(&port)?;
        let uef = frontier::parse_portef(&std::fs::read_to_string(&portef)?).context("portef")?;
        let pairs: Vec<[f64; 2]> = uef.iter().map(|&(r, v)| [r, v]).collect();
        let instance = json!({"port": text, "cardinality": 10, "min_weight": 0.01, "max_weight": 1, "points": 50, "frontier": pairs, "nondominated": true});
        let instance = portfolio::parse_json(&instance, &Limits::default())?;
        let n = instance.num_assets();
        let ours: Vec<Run> = config
            .seeds
            .iter()
            .map(|&seed| run(&instance, "search", seed, config.time_limit_s))
            .collect::<Result<_>>()?;
        let mut errors: Vec<f64> = ours.iter().map(|r| r.error).collect();
        errors.sort_by(f64::total_cmp);
        let mut seconds: Vec<f64> = ours.iter().map(|r| r.seconds).collect();
        seconds.sort_by(f64::total_cmp);
        let mut efficient: Vec<f64> = ours.iter().map(|r| r.efficient_error).collect();
        efficient.sort_by(f64::total_cmp);
        let mut efficient_counts: Vec<f64> = ours.iter().map(|r| r.efficient as f64).collect();
        efficient_counts.sort_by(f64::total_cmp);
        let mut nondominated: Vec<f64> = ours.iter().map(|r| r.nondominated_error).collect();
        nondominated.sort_by(f64::total_cmp);
        let mut counts: Vec<f64> = ours.iter().map(|r| r.listed as f64).collect();
        counts.sort_by(f64::total_cmp);
        let ga = run(&instance, "ga", 0, config.time_limit_s)?;
        let greedy = run(&instance, "greedy", 0, config.time_limit_s)?;
        crate::progress::row_done(format!("{name}: ours {errors:?}, ga {:.4}, greedy {:.4}", ga.error, greedy.error));
        writeln!(
            table,
            "| {name} | {n} | {:.4} ({:.4}) | {:.4} ({:.4}) | {} | {:.4} ({:.4}) | {} | {:.2} | {:.4} / {:.4} | {:.2} | {:.4} / {:.4} | {:.2} | {published_ga} | {published_pso} |",
            super::median(&errors),
            errors.last().copied().unwrap_or(f64::NAN),
            super::median(&efficient),
            efficient.last().copied().unwrap_or(f64::NAN),
            super::median(&efficient_counts),
            super::median(&nondominated),
            nondominated.last().copied().unwrap_or(f64::NAN),
            super::median(&counts),
            super::median(&seconds),
            ga.error,
            ga.efficient_error,
            ga.seconds,
            greedy.error,
            greedy.efficient_error,
            greedy.seconds,
        )?;
        // The proof, per lambda, from seed 0's point.
        let started = Instant::now();
        let (mut proven, mut equal, mut gap, mut nodes) = (0, 0, 0.0f64, 0);
        for ((lambda, objective), allocation) in ours[0].points.iter().zip(&ours[0].allocations) {
            let goal = Goal::Tradeoff(*lambda);
            let proof = branch_bound::solve(
                &instance,
                &goal,
                10,
                Some(allocation.clone()),
                Duration::from_secs_f64(config.proof_limit_s),
            );
            nodes += proof.nodes;
            gap = gap.max(proof.gap);
            if proof.gap <= branch_bound::PROVEN_GAP {
                proven += 1;
                let optimum = proof.best.as_ref().map_or(f64::INFINITY, |b| b.objective);
                let scale = portfolio::search::objective_scale(&instance, &goal);
                equal += usize::from(*objective <= optimum + 1e-9 * scale);
            }
        }
        writeln!(
            proofs,
            "| {name} | {proven}/50 | {equal}/{proven} | {gap:.2e} | {nodes} | {:.1} |",
            started.elapsed().as_secs_f64()
        )?;
        // The UEF: our least variance at each checked portef return, and our largest return at
        // its variance (a risk budget), against the file.
        let (mut dv, mut dr, mut checked) = (0.0f64, 0.0f64, 0);
        let all: Vec<usize> = (0..n).collect();
        let unconstrained = portfolio::load(rlsolver::problems::ProblemInput::Text(&text), &Limits::default())?;
        for &(r, v) in uef.iter().step_by(config.uef_stride.max(1)) {
            let at_return = unconstrained.solve_held(&all, &Goal::TargetReturn(r), false).context("a UEF point")?;
            let at_variance = unconstrained.solve_held(&all, &Goal::RiskBudget(v), false).context("a UEF point")?;
            dv = dv.max((at_return.variance - v).abs());
            dr = dr.max((at_variance.expected_return - r).abs());
            checked += 1;
        }
        writeln!(uef_rows, "| {name} | {checked} | {dv:.2e} | {dr:.2e} |")?;
    }
    Ok(format!(
        "Cardinality-constrained frontier (K = 10, eps = 0.01, delta = 1, 50 lambdas; {} s budget per frontier; seeds {:?}; GA and greedy seed 0):\n\n{table}\nBranch and bound per lambda (from our seed-0 point, {} s per lambda):\n\n{proofs}\nUnconstrained frontier against portef:\n\n{uef_rows}",
        config.time_limit_s, config.seeds, config.proof_limit_s
    ))
}

/// `rlsolver bench portfolio`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_portfolio(&PortfolioBenchConfig {
        seeds: args.seeds,
        time_limit_s: args.time_limit[0],
        ..PortfolioBenchConfig::in_folder(&args.instances)
    })
}

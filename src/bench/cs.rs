//! `rlsolver bench cs`: the phase-transition table of sparse recovery (Gaussian A, n = 100,
//! m = 50, k-sparse x with N(0, 1) entries, y = A x; success = relative error below 1e-3),
//! success rates of OMP, ISTA, FISTA and our search per k, with mean seconds per instance.

use anyhow::Result;
use rlsolver::problems::cs::recovery::{gaussian_instance, relative_error};
use rlsolver::problems::cs::{parse_json, BASELINES};
use rlsolver::problems::{Instance, Limits};
use rlsolver::search::SearchParams;
use serde_json::json;
use std::fmt::Write as _;

#[derive(Debug, Clone)]
pub struct CsBenchConfig {
    pub m: usize,
    pub n: usize,
    pub sparsities: Vec<usize>,
    pub instances: usize,
    pub time_limit_s: f64,
    pub seed: u64,
}

impl Default for CsBenchConfig {
    /// The phase-transition table: 50 x 100 Gaussian A, sparsities 5..30 by 5, 50 instances each,
    /// 2 s of search per instance, seed 0.
    fn default() -> Self {
        CsBenchConfig {
            m: 50,
            n: 100,
            sparsities: (1..=6).map(|i| 5 * i).collect(),
            instances: 50,
            time_limit_s: 2.0,
            seed: 0,
        }
    }
}

pub fn run_cs(config: &CsBenchConfig) -> Result<String> {
    let mut report = String::new();
    writeln!(
        report,
        "| k |{} search | search s/instance |",
        BASELINES.iter().map(|b| format!(" {b} |")).collect::<String>()
    )?;
    writeln!(report, "|---|{}---|---|", "---|".repeat(BASELINES.len()))?;
    // The shipped models, as the server would load them.
    let registry =
        rlsolver::models::ModelRegistry::load_dir(&rlsolver::models::default_dir(), rlsolver::problems::policy_loaders);
    let models = rlsolver::problems::Models { registry: &registry, requested: None };
    for &k in &config.sparsities {
        let mut successes = vec![0usize; BASELINES.len() + 1];
        let mut seconds = 0.0;
        for i in 0..config.instances {
            let (a, x, y) = gaussian_instance(
                config.m,
                config.n,
                k,
                config.seed.wrapping_mul(1_000_003).wrapping_add((k * 10_000 + i) as u64),
            );
            let rows: Vec<Vec<f64>> = a.rows().into_iter().map(|r| r.to_vec()).collect();
            let instance = parse_json(&json!({"A": rows, "y": y, "sparsity": k}), &Limits::default())?;
            let params =
                SearchParams { time_limit_s: config.time_limit_s, seed: config.seed, ..SearchParams::default() };
            let estimate = |report: rlsolver::problems::SolveReport| -> Vec<f64> {
                serde_json::from_value(report.solution["x"].clone()).expect("x")
            };
            for (b, name) in BASELINES.iter().enumerate() {
                let found = match instance.solve_baseline(name, &params, models) {
                    Ok(report) => estimate(report),
                    // No LISTA model for this shape: the policy column stays at 0%.
                    Err(_) if *name == "policy" => continue,
                    Err(error) => return Err(error.into()),
                };
                successes[b] += usize::from(relative_error(&found, &x) < 1e-3);
            }
            let searched = instance.solve(&params, models);
            seconds += searched.elapsed_ms / 1e3;
            successes[BASELINES.len()] += usize::from(relative_error(&estimate(searched), &x) < 1e-3);
        }
        let rate = |s: usize| format!(" {:.0}% |", 100.0 * s as f64 / config.instances as f64);
        crate::progress::row_done(format!("k = {k}: {successes:?}"));
        writeln!(
            report,
            "| {k} |{} {:.3} |",
            successes.iter().map(|&s| rate(s)).collect::<String>(),
            seconds / config.instances as f64
        )?;
    }
    Ok(report)
}

/// `rlsolver bench cs`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_cs(&CsBenchConfig { time_limit_s: args.time_limit[0], seed: args.seed, ..Default::default() })
}

//! `rlsolver bench cs`: the phase-transition table of sparse recovery (Gaussian A, n = 100,
//! m = 50, k-sparse x with N(0, 1) entries, y = A x; success = relative error below 1e-3),
//! success rates of OMP, ISTA, FISTA and our search per k, with mean seconds per instance.

use crate::problems::cs::lista::ListaPolicy;
use crate::problems::cs::recovery::{gaussian_instance, least_squares, relative_error, top_k};
use crate::problems::cs::{parse_json, BASELINES};
use crate::problems::{Instance, Limits};
use crate::search::SearchParams;
use anyhow::Result;
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
        crate::models::ModelRegistry::load_dir(&crate::models::default_dir(), crate::problems::policy_loaders);
    let models = crate::problems::Models { registry: &registry, requested: None };
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
            let estimate = |report: crate::problems::SolveReport| -> Vec<f64> {
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

/// The LISTA policy on fresh Gaussian instances of its shape, per k in 5, 10, .., 30: the raw
/// estimate's mean normalized error (dB), and the share of instances recovered (relative error
/// < 1e-3) after the least-squares refit on its k largest entries.
pub fn validate_policy(policy: &ListaPolicy, per_k: usize, seed: u64) -> serde_json::Value {
    let (m, n) = (policy.config.measurements, policy.config.unknowns);
    let rows: Vec<serde_json::Value> = (1..=6)
        .map(|step| 5 * step)
        .filter(|&k| k < m)
        .map(|k| {
            let (mut nmse, mut recovered) = (0.0, 0usize);
            for i in 0..per_k {
                let (a, x, y) = gaussian_instance(m, n, k, seed.wrapping_mul(7_919).wrapping_add((k * 10_000 + i) as u64));
                let estimate = policy.estimate(&a, &y);
                nmse += relative_error(&estimate, &x).powi(2);
                let support = top_k(&estimate, k);
                let (values, _) = least_squares(&a, &y, &support);
                let mut refit = vec![0.0; n];
                for (s, v) in support.iter().zip(values) {
                    refit[*s] = v;
                }
                recovered += usize::from(relative_error(&refit, &x) < 1e-3);
            }
            json!({"k": k, "nmse_db": 10.0 * (nmse / per_k as f64).log10(), "recovered_after_refit": recovered as f64 / per_k as f64})
        })
        .collect();
    json!(rows)
}

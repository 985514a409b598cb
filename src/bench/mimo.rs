//! `rlsolver bench mimo`: average sum rate over a channel set (the shared K = N = 8 Rayleigh set
//! by default) at each power, for every baseline and for the search at a time limit per channel.

use anyhow::{Context, Result};
use rlsolver::problems::mimo::{parse_json, MimoInstance, BASELINES};
use rlsolver::problems::{Instance, Limits};
use rlsolver::search::SearchParams;
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct MimoBenchConfig {
    /// JSON with `samples[s].re/.im` (K x N) and `noise_power`.
    pub channels: PathBuf,
    pub powers: Vec<f64>,
    pub time_limit_s: f64,
    pub seed: u64,
}

impl MimoBenchConfig {
    /// The shared set in `folder` (`rayleigh_k8_n8_100.json`) at P = 10 and 100, 1 s per channel, seed 0.
    pub fn in_folder(folder: &std::path::Path) -> Self {
        MimoBenchConfig {
            channels: folder.join("rayleigh_k8_n8_100.json"),
            powers: vec![10.0, 100.0],
            time_limit_s: 1.0,
            seed: 0,
        }
    }
}

fn load(config: &MimoBenchConfig, power: f64) -> Result<Vec<MimoInstance>> {
    let data: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&config.channels).with_context(|| format!("{}", config.channels.display()))?,
    )?;
    let noise = data["noise_power"].as_f64().unwrap_or(1.0);
    let samples = data["samples"].as_array().context("samples")?;
    samples
        .iter()
        .map(|s| {
            Ok(parse_json(
                &json!({"channel": {"re": s["re"], "im": s["im"]}, "power": power, "noise": noise}),
                &Limits::default(),
            )?)
        })
        .collect()
}

pub fn run_mimo(config: &MimoBenchConfig) -> Result<String> {
    let mut report = String::new();
    writeln!(
        report,
        "| P | channels |{} search ({} s/channel) | search - wmmse | search s/channel (mean) |",
        BASELINES.iter().map(|b| format!(" {b} |")).collect::<String>(),
        config.time_limit_s
    )?;
    writeln!(report, "|---|---|{}---|---|---|", "---|".repeat(BASELINES.len()))?;
    // The shipped models, as the server would load them.
    let registry =
        rlsolver::models::ModelRegistry::load_dir(&rlsolver::models::default_dir(), rlsolver::problems::policy_loaders);
    let models = rlsolver::problems::Models { registry: &registry, requested: None };
    for &power in &config.powers {
        let instances = load(config, power)?;
        let params = SearchParams { time_limit_s: config.time_limit_s, seed: config.seed, ..SearchParams::default() };
        let mut sums = vec![0.0; BASELINES.len()];
        let (mut search, mut seconds) = (0.0, 0.0);
        for instance in &instances {
            for (sum, name) in sums.iter_mut().zip(BASELINES) {
                // `policy` without a model for this size counts as NaN in its column.
                *sum += instance.solve_baseline(name, &params, models).map_or(f64::NAN, |r| r.objective);
            }
            let found = instance.solve(&params, models);
            search += found.objective;
            seconds += found.elapsed_ms / 1e3;
        }
        let n = instances.len() as f64;
        let wmmse = sums[BASELINES.iter().position(|b| *b == "wmmse").expect("listed")] / n;
        crate::progress::row_done(format!("P = {power}: search {:.3}, wmmse {wmmse:.3}", search / n));
        writeln!(
            report,
            "| {power} | {} |{} {:.2} | {:+.3} | {:.2} |",
            instances.len(),
            sums.iter().map(|s| format!(" {:.2} |", s / n)).collect::<String>(),
            search / n,
            search / n - wmmse,
            seconds / n
        )?;
    }
    Ok(report)
}

/// `rlsolver bench mimo`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_mimo(&MimoBenchConfig {
        time_limit_s: args.time_limit[0],
        seed: args.seed,
        ..MimoBenchConfig::in_folder(&args.instances)
    })
}

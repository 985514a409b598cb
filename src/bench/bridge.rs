//! `rlsolver bench bridge`: what the Gymnasium bridge costs. Env steps per second of
//! `gymnasium:<id>` through the bridge (its workers: min(B, --bridge-workers), default the
//! cores) against the same env stepped by `benches/peers/gym_vector_peer.py` in the same run:
//! B copies in one Python loop, gymnasium's SyncVectorEnv and its AsyncVectorEnv (one process
//! per env), at B = 1, 16, 64, uniformly random actions. Medians of repeats; ratio = ours / peer.

use super::drl::env_steps_per_second;
use anyhow::Result;
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct BridgeBenchConfig {
    pub envs: Vec<String>,
    pub batches: Vec<usize>,
    pub repeats: usize,
    pub seconds: f64,
    /// `(python, benches/peers/gym_vector_peer.py)`; None: our rows only.
    pub peer: Option<(PathBuf, PathBuf)>,
}

impl Default for BridgeBenchConfig {
    /// CartPole (the bridge's cost dominates) and MuJoCo Hopper (the simulator's does), B = 1,
    /// 16, 64, the median of 5 runs of at least 1 s.
    fn default() -> Self {
        BridgeBenchConfig {
            envs: vec!["CartPole-v1".into(), "Hopper-v5".into()],
            batches: vec![1, 16, 64],
            repeats: 5,
            seconds: 1.0,
            peer: None,
        }
    }
}

#[derive(Debug, Deserialize)]
struct PeerRow {
    env: String,
    batch: usize,
    mode: String,
    steps_per_s: f64,
}

#[derive(Debug, Deserialize)]
struct PeerReport {
    versions: serde_json::Value,
    rows: Vec<PeerRow>,
}

pub fn run_bridge(config: &BridgeBenchConfig) -> Result<String> {
    let peer: Option<PeerReport> = match &config.peer {
        Some((python, script)) => {
            let batches: Vec<String> = config.batches.iter().map(usize::to_string).collect();
            let args = [
                "--envs".into(),
                config.envs.join(","),
                "--batches".into(),
                batches.join(","),
                "--repeats".into(),
                config.repeats.to_string(),
                "--seconds".into(),
                config.seconds.to_string(),
            ];
            Some(super::run_peer(python, script, &args)?)
        }
        None => None,
    };
    let bridge = rlsolver::drl::env::gymnasium::BridgeConfig::default();
    let mut out = String::new();
    writeln!(out, "# Gymnasium bridge overhead (`rlsolver bench bridge`)\n")?;
    writeln!(
        out,
        "Env steps per second, uniformly random actions, median of {} runs of at least {} s; bridge workers \
         min(B, {}); {} cores; ratio = bridge / peer (above 1: the bridge is faster).\n",
        config.repeats,
        config.seconds,
        bridge.max_workers,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    )?;
    if let Some(p) = &peer {
        writeln!(out, "Peer: `benches/peers/gym_vector_peer.py`, {}\n", p.versions)?;
    }
    writeln!(out, "| env | B | bridge | Python loop | SyncVectorEnv | AsyncVectorEnv | bridge / loop | bridge / sync | bridge / async |")?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|")?;
    for env in &config.envs {
        for &b in &config.batches {
            let ours = env_steps_per_second(&format!("gymnasium:{env}"), b, config.repeats, config.seconds)?;
            let theirs = |mode: &str| {
                peer.as_ref().and_then(|p| p.rows.iter().find(|r| r.env == *env && r.batch == b && r.mode == mode))
            };
            let cell = |mode: &str| theirs(mode).map_or("-".into(), |r| format!("{:.0}", r.steps_per_s));
            let ratio = |mode: &str| theirs(mode).map_or("-".into(), |r| format!("{:.2}", ours / r.steps_per_s));
            writeln!(
                out,
                "| {env} | {b} | {ours:.0} | {} | {} | {} | {} | {} | {} |",
                cell("python"),
                cell("sync"),
                cell("async"),
                ratio("python"),
                ratio("sync"),
                ratio("async")
            )?;
            crate::progress::row_done(format!("bridge {env} B={b}: {ours:.0} steps/s"));
        }
    }
    Ok(out)
}

/// `rlsolver bench bridge`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_bridge(&BridgeBenchConfig {
        peer: args
            .python
            .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/gym_vector_peer.py".into()))),
        ..Default::default()
    })
}

//! `rlsolver bench`: a report (markdown) of one benchmark, on stdout and optionally to a file.

use anyhow::Result;
use clap::Args;
use rlsolver::problems;
use std::path::PathBuf;

use crate::progress::{self, Measure};

/// Every `bench` target; clap refuses any other name and lists these.
pub const BENCHES: [&str; 18] = [
    "maxcut",
    "drl",
    "mimo",
    "cs",
    "nphard",
    "tnco",
    "portfolio",
    "tsp",
    "orgym",
    "bifurcation",
    "backends",
    "device-envs",
    "ising-policy",
    "population",
    "apex",
    "bridge",
    "simulators",
    "trading",
];

#[derive(Args)]
pub struct BenchArgs {
    /// What to benchmark: maxcut (solution quality), drl (env throughput, time to threshold), mimo
    /// (sum rates), cs (phase transition), nphard (optima of the classical NP-hard sets), tnco
    /// (contraction orders against cotengra), portfolio (Chang et al.'s frontiers), tsp (TSPLIB
    /// tours against their optima), orgym (OR-Gym policies against their references, env
    /// throughput against or-gymnasium), bifurcation (simulated bifurcation on Gset at each
    /// time limit, --chains chains, default 1024, on --device), backends (the search with each
    /// of --backends at each time limit on --device: the Gset graphs named by --only, default
    /// G14,G15,G22,G49,G50, and a generated --torus-side torus), device-envs (classic control as
    /// tensors on --device and PPO on them against the native envs and loop) or ising-policy (the pretrained
    /// Ising policy against greedy and SA, and the search with and without it, on the Gset
    /// graphs named by --only, default G14,G15,G22,G49,G50, and generated 5,000 and 10,000-node
    /// graphs, at the first --time-limit) or population (PBT against independent runs at equal
    /// env steps: SAC on Pendulum-v1 and MADDPG on simple_spread, --seeds, --workers, wall time
    /// by --timing-workers; --only pendulum or spread) or apex (a learner with --rollouts rollout
    /// processes against the single-process loop at equal --updates) or bridge (gymnasium: envs
    /// through the Python bridge against gymnasium's own vector envs, peer run by --python) or
    /// simulators (our algorithms through the bridge against Stable-Baselines3 on MuJoCo and
    /// PyBullet tasks; --only, --seeds, --steps-scale) or trading (PPO and SAC on StockTrading-v0
    /// against buy-and-hold and mean-variance, out-of-sample, over --seeds markets).
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(BENCHES))]
    problem: String,
    /// Folder of instances (maxcut: Gset .txt files, best-known values in its README.md; mimo:
    /// the folder holding rayleigh_k8_n8_100.json; nphard: the folder holding mis/; tnco: the
    /// folder of Sycamore adjacency lists; portfolio: the folder of portK.txt and portefK.txt;
    /// tsp: the folder of .tsp files with the optima in its README.md).
    #[arg(long, default_value = "../shared/data/gset")]
    instances: PathBuf,
    /// Comma-separated time limits in seconds, one column each.
    #[arg(long, default_value = "10,60", value_delimiter = ',')]
    time_limit: Vec<f64>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long)]
    chains: Option<usize>,
    /// cpu, cuda or auto.
    #[arg(long, default_value = "auto")]
    device: String,
    /// Also write the table to this file.
    #[arg(long)]
    output: Option<PathBuf>,
    /// drl, tnco, orgym: Python interpreter with the peer (stable-baselines3; cotengra;
    /// or-gymnasium) for the peer measurements (none: ours only).
    #[arg(long)]
    python: Option<PathBuf>,
    /// drl, tnco, orgym: the peer script (default: benches/peers/sb3_peer.py;
    /// benches/peers/cotengra_peer.py; benches/peers/orgym_peer.py).
    #[arg(long)]
    peer_script: Option<PathBuf>,
    /// maxcut, nphard, tnco, portfolio, tsp: seeds of our runs (median and worst per cell); drl: seeds of the time-to-threshold runs.
    #[arg(long, default_value = "0,1,2,3,4", value_delimiter = ',')]
    seeds: Vec<u64>,
    /// nphard: only these problems' suites; ising-policy, backends: only these Gset graphs; orgym: only these sections (knapsack,
    /// knapsack-online (its v3 rows), binpacking, newsvendor, inventory, portfolio, tsp,
    /// vmpacking, routing, throughput); comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// simulators, trading: every budget times this (1: the full budgets).
    #[arg(long, default_value_t = 1.0)]
    steps_scale: f64,
    /// simulators: also train the off-policy tasks with each of these H-term weights.
    #[arg(long, value_delimiter = ',')]
    h_term_lambdas: Vec<f64>,
    /// orgym: evaluation episodes per row.
    #[arg(long, default_value_t = 1000)]
    episodes: usize,
    /// backends: the search backends compared (native, tensor, tempering, bifurcation;
    /// default native,tempering,bifurcation).
    #[arg(long, value_delimiter = ',')]
    backends: Vec<String>,
    /// backends: side of the generated toroidal spin glass (default 100: 10,000 nodes; 0: none).
    #[arg(long)]
    torus_side: Option<usize>,
    /// apex: rollout process counts (default 1,2,4).
    #[arg(long, value_delimiter = ',')]
    rollouts: Vec<usize>,
    /// apex: learner updates per run (default 10000).
    #[arg(long)]
    updates: Option<usize>,
    /// population: job workers of the quality runs.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// population: worker counts of the wall-time table (comma-separated; empty: none).
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    timing_workers: Vec<usize>,
}

pub fn run(args: BenchArgs) -> Result<()> {
    let _bar = progress::start(Measure::Rows, &format!("bench {}", args.problem));
    let report = match args.problem.as_str() {
        "maxcut" => crate::bench::run_maxcut(&crate::bench::BenchConfig {
            instances: args.instances,
            time_limits_s: args.time_limit,
            seeds: args.seeds.clone(),
            device: problems::parse_device(Some(&args.device))?,
            chains: args.chains,
        })?,
        "bifurcation" => {
            crate::bench::bifurcation::run_bifurcation(&crate::bench::bifurcation::BifurcationBenchConfig {
                instances: args.instances,
                time_limits_s: args.time_limit,
                seeds: args.seeds.clone(),
                device: problems::parse_device(Some(&args.device))?,
                chains: args.chains.unwrap_or(1024),
            })?
        }
        "device-envs" => {
            use crate::bench::device_envs::{run_device_envs, DeviceEnvsBenchConfig};
            run_device_envs(&DeviceEnvsBenchConfig {
                device: problems::parse_device(Some(&args.device))?,
                seeds: args.seeds.clone(),
                ..DeviceEnvsBenchConfig::default()
            })?
        }
        "backends" => {
            use crate::bench::backends::{run_backends, BackendsBenchConfig};
            let defaults = BackendsBenchConfig::default();
            let backends = args
                .backends
                .iter()
                .map(|name| {
                    problems::parse_backend(Some(name))?
                        .ok_or_else(|| anyhow::anyhow!("--backends: name one, not auto"))
                })
                .collect::<Result<Vec<_>>>()?;
            run_backends(&BackendsBenchConfig {
                instances: args.instances,
                graphs: if args.only.is_empty() { defaults.graphs } else { args.only.clone() },
                torus_side: args.torus_side.unwrap_or(defaults.torus_side),
                backends: if backends.is_empty() { defaults.backends } else { backends },
                time_limits_s: args.time_limit,
                seeds: args.seeds.clone(),
                device: problems::parse_device(Some(&args.device))?,
                chains: args.chains,
            })?
        }
        "ising-policy" => {
            use crate::bench::ising_policy::{run_ising_policy, IsingPolicyBenchConfig};
            let defaults = IsingPolicyBenchConfig::default();
            let config = IsingPolicyBenchConfig {
                instances: args.instances,
                graphs: if args.only.is_empty() { defaults.graphs } else { args.only.clone() },
                time_limit_s: args.time_limit.first().copied().unwrap_or(defaults.time_limit_s),
                seeds: args.seeds.clone(),
                chains: args.chains.unwrap_or(defaults.chains),
            };
            run_ising_policy(&config)?
        }
        "bridge" => {
            use crate::bench::bridge::{run_bridge, BridgeBenchConfig};
            run_bridge(&BridgeBenchConfig {
                peer: args.python.map(|python| {
                    (python, args.peer_script.unwrap_or_else(|| "benches/peers/gym_vector_peer.py".into()))
                }),
                ..Default::default()
            })?
        }
        "simulators" => {
            use crate::bench::simulators::{run_simulators, SimulatorBenchConfig};
            run_simulators(&SimulatorBenchConfig {
                seeds: args.seeds.clone(),
                steps_scale: args.steps_scale,
                only: args.only.clone(),
                h_term_lambdas: args.h_term_lambdas.clone(),
                peer: args.python.map(|python| {
                    (python, args.peer_script.unwrap_or_else(|| "benches/peers/sb3_simulators_peer.py".into()))
                }),
            })?
        }
        "trading" => {
            use crate::bench::trading::{run_trading, TradingBenchConfig};
            let defaults = TradingBenchConfig::default();
            let scaled = |steps: usize| ((steps as f64 * args.steps_scale) as usize).max(1000);
            run_trading(&TradingBenchConfig {
                seeds: args.seeds.clone(),
                ppo_steps: scaled(defaults.ppo_steps),
                sac_steps: scaled(defaults.sac_steps),
            })?
        }
        "apex" => {
            use crate::bench::apex::{run_apex, ApexBenchConfig};
            let defaults = ApexBenchConfig::default();
            run_apex(&ApexBenchConfig {
                rollouts: if args.rollouts.is_empty() { defaults.rollouts } else { args.rollouts.clone() },
                seeds: args.seeds.clone(),
                updates: args.updates.unwrap_or(defaults.updates),
            })?
        }
        "population" => {
            use crate::bench::population::{run_population, PopulationBenchConfig};
            run_population(&PopulationBenchConfig {
                seeds: args.seeds.clone(),
                workers: args.workers,
                timing_workers: args.timing_workers.clone(),
                only: args.only.clone(),
                ..PopulationBenchConfig::default()
            })?
        }
        "drl" => crate::bench::drl::run_drl(&crate::bench::drl::DrlBenchConfig {
            seeds: args.seeds,
            peer: args
                .python
                .map(|python| (python, args.peer_script.clone().unwrap_or_else(|| "benches/peers/sb3_peer.py".into()))),
            ..Default::default()
        })?,
        "tnco" => crate::bench::tnco::run_tnco(&crate::bench::tnco::TncoBenchConfig {
            time_limits_s: args.time_limit,
            seeds: args.seeds,
            peer: args
                .python
                .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/cotengra_peer.py".into()))),
            ..crate::bench::tnco::TncoBenchConfig::in_folder(&args.instances)
        })?,
        "mimo" => crate::bench::mimo::run_mimo(&crate::bench::mimo::MimoBenchConfig {
            time_limit_s: args.time_limit[0],
            seed: args.seed,
            ..crate::bench::mimo::MimoBenchConfig::in_folder(&args.instances)
        })?,
        "cs" => crate::bench::cs::run_cs(&crate::bench::cs::CsBenchConfig {
            time_limit_s: args.time_limit[0],
            seed: args.seed,
            ..Default::default()
        })?,
        "nphard" => crate::bench::nphard::run_nphard(&crate::bench::nphard::NphardBenchConfig {
            data: args.instances,
            time_limits_s: args.time_limit,
            seeds: args.seeds,
            only: args.only,
        })?,
        "portfolio" => crate::bench::portfolio::run_portfolio(&crate::bench::portfolio::PortfolioBenchConfig {
            seeds: args.seeds,
            time_limit_s: args.time_limit[0],
            ..crate::bench::portfolio::PortfolioBenchConfig::in_folder(&args.instances)
        })?,
        "tsp" => crate::bench::tsp::run_tsp(&crate::bench::tsp::TspBenchConfig {
            time_limits_s: args.time_limit,
            seeds: args.seeds,
            ..crate::bench::tsp::TspBenchConfig::in_folder(&args.instances)
        })?,
        "orgym" => crate::bench::orgym::run_orgym(&crate::bench::orgym::OrGymBenchConfig {
            peer: args
                .python
                .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/orgym_peer.py".into()))),
            episodes: args.episodes,
            only: args.only,
            ..Default::default()
        })?,
        other => unreachable!("clap admits only the BENCHES names, not '{other}'"),
    };
    print!("{report}");
    if let Some(path) = args.output {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, &report)?;
    }
    Ok(())
}

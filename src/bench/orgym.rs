//! `rlsolver bench orgym`: every OR-Gym env's shipped policy against its reference (exact DP for
//! Knapsack-v0..v2, the offline optimum for v3) on evaluation episodes the policy never saw
//! (seeds disjoint from training's and from the training monitor's), with the class's textbook
//! heuristics and a uniformly random allowed action beside it, on the default parameters and on
//! changed ones (larger knapsacks, a longer online horizon); then env throughput at B = 1 and
//! B = 4096 against or-gymnasium's own env stepped by `benches/peers/orgym_peer.py` in the run.

use anyhow::Result;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlsolver::drl::env::VecEnv;
use rlsolver::drl::run::{greedy_actions, load_policy_for};
use rlsolver::problems::orgym::binpacking::env::{BinPackingConfig, BinPackingVecEnv, IDS as BIN_PACKING_IDS};
use rlsolver::problems::orgym::binpacking::reference::{
    allowed_levels, best_fit_action, rollout as binpacking_rollout, sum_of_squares_action, Packing,
};
use rlsolver::problems::orgym::env::{random_allowed, OrGymConfig};
use rlsolver::problems::orgym::inventory::env::{Chain, InventoryConfig, IDS as INVENTORY_IDS};
use rlsolver::problems::orgym::inventory::reference::{rollout as inventory_rollout, shrinking_horizon_returns};
use rlsolver::problems::orgym::knapsack::env::{KnapsackConfig, KnapsackVecEnv, Variant};
use rlsolver::problems::orgym::knapsack::reference::{best_threshold, greedy_action, online_bellman_value, rollout};
use rlsolver::problems::orgym::newsvendor::env::NewsvendorConfig;
use rlsolver::problems::orgym::newsvendor::reference::rollout as newsvendor_rollout;
use rlsolver::problems::orgym::portfolio::env::{Portfolio, PortfolioConfig};
use rlsolver::problems::orgym::portfolio::reference::{
    oracle_wealths, rollout as portfolio_rollout, shrinking_horizon_rollout as portfolio_shrinking_horizon,
};
use rlsolver::problems::orgym::tsp::env::{TspConfig, Walk, IDS as TSP_IDS};
use rlsolver::problems::orgym::tsp::reference::{reference_returns as tsp_reference_returns, rollout as tsp_rollout};
use rlsolver::problems::orgym::validation::{
    inventory_base_stock, mean_ci, newsvendor_policy_returns, newsvendor_references, percent_of, policy_returns,
    wastes, TUNING_SEED,
};
use rlsolver::problems::orgym::vehicle_routing::env::{Dispatch, VehicleRoutingConfig};
use rlsolver::problems::orgym::vehicle_routing::reference::{dispatcher_returns, rollout as routing_rollout};
use rlsolver::problems::orgym::vmpacking::env::{DataCenter, VmPackingConfig, IDS as VM_IDS};
use rlsolver::problems::orgym::vmpacking::reference::{rollout as vm_rollout, rule_returns, Rule};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Evaluation episodes start from this seed (training runs use small seeds; the training
/// monitor evaluates on 1_000_003).
pub const EVALUATION_SEED: u64 = 7_000_000_001;

#[derive(Debug, Clone)]
pub struct OrGymBenchConfig {
    /// The folder of the shipped policies (`models/orgym-<env>/`).
    pub models: PathBuf,
    pub episodes: usize,
    /// Python with or-gymnasium, and the peer script (None: our throughput only).
    pub peer: Option<(PathBuf, PathBuf)>,
    /// Envs per batch in the throughput table.
    pub batches: Vec<usize>,
    /// Only these sections (`SECTIONS`); empty: all.
    pub only: Vec<String>,
}

/// The report's sections, in order (`--only` picks some).
pub const SECTIONS: [&str; 10] = [
    "knapsack",
    "knapsack-online",
    "binpacking",
    "newsvendor",
    "inventory",
    "portfolio",
    "tsp",
    "vmpacking",
    "routing",
    "throughput",
];

impl Default for OrGymBenchConfig {
    fn default() -> Self {
        OrGymBenchConfig {
            models: "models".into(),
            episodes: 1000,
            peer: None,
            batches: vec![1, 4096],
            only: Vec::new(),
        }
    }
}

/// The folder a variant's shipped policy lives in.
pub fn model_dir(models: &Path, variant: Variant) -> PathBuf {
    models.join(format!("orgym-{}", variant.id().to_lowercase()))
}

/// "mean ± ci | % of reference ± ci" cells of one policy's returns.
fn cells(returns: &[f64], references: &[f64]) -> String {
    let (mean, ci) = mean_ci(returns);
    let (ratio, ratio_ci) = percent_of(returns, references);
    format!("{mean:.1} ± {ci:.1} | {ratio:.2} ± {ratio_ci:.2}")
}

/// The settings each variant is measured on: the default, then changed parameters.
fn settings(variant: Variant) -> Vec<(String, KnapsackConfig)> {
    let default = KnapsackConfig::new(variant);
    let changed = match variant {
        Variant::Online => KnapsackConfig { step_limit: 100, capacity: 300, ..default.clone() },
        _ => KnapsackConfig { items: 500, capacity: 500, ..default.clone() },
    };
    let describe = |c: &KnapsackConfig| match variant {
        Variant::Online => format!("N {} C {} T {}", c.items, c.capacity, c.step_limit),
        _ => format!("N {} C {}", c.items, c.capacity),
    };
    vec![(describe(&default), default), (describe(&changed), changed)]
}

fn quality(config: &OrGymBenchConfig, variants: &[Variant], report: &mut String) -> Result<()> {
    let n = config.episodes;
    writeln!(
        report,
        "| env | parameters | reference mean | policy: return ± 95% CI | % of reference | heuristic | return | % of reference | random: % of reference |"
    )?;
    writeln!(report, "|---|---|---|---|---|---|---|---|---|")?;
    let mut bounds = Vec::new();
    for &variant in variants {
        for (label, env_config) in settings(variant) {
            let dir = model_dir(&config.models, variant);
            let featured = env_config.policy_observation();
            let probe = KnapsackVecEnv::new(featured.clone(), n);
            let policy_cells = match load_policy_for(&dir, tch::Device::Cpu, &probe) {
                Ok(mut agent) => {
                    let (returns, references) =
                        rollout(&featured, n, EVALUATION_SEED, &mut |obs, dim| greedy_actions(&mut agent, obs, dim));
                    cells(&returns, &references)
                }
                Err(error) => {
                    crate::progress::line(format!("{}: no policy ({error:#})", dir.display()));
                    "- | -".into()
                }
            };
            let (heuristic, threshold) = match variant {
                Variant::Online => {
                    let (threshold, _) = best_threshold(&env_config, n, TUNING_SEED);
                    (format!("best fixed threshold (value/weight >= {threshold:.2})"), threshold)
                }
                _ => ("value/weight greedy".to_string(), 0.0),
            };
            let (heuristic_returns, references) = rollout(&env_config, n, EVALUATION_SEED, &mut |obs, dim| {
                obs.chunks(dim).map(|row| greedy_action(&env_config, row, threshold)).collect()
            });
            let mut rng = ChaCha8Rng::seed_from_u64(EVALUATION_SEED);
            let actions = env_config.action_count();
            let (random_returns, _) = rollout(&env_config, n, EVALUATION_SEED, &mut |obs, dim| {
                obs.chunks(dim).map(|row| random_allowed(&row[..actions], &mut rng)).collect()
            });
            let (reference, reference_ci) = mean_ci(&references);
            let random = cells(&random_returns, &references);
            let random_ratio = random.split(" | ").nth(1).unwrap_or("-").to_string();
            writeln!(
                report,
                "| {} | {label} | {reference:.1} ± {reference_ci:.1} | {policy_cells} | {heuristic} | {} | {random_ratio} |",
                variant.id(),
                cells(&heuristic_returns, &references),
            )?;
            if variant == Variant::Online {
                let mut env = KnapsackVecEnv::new(env_config.clone(), n);
                env.reset(EVALUATION_SEED);
                let bound: Vec<f64> = (0..n)
                    .map(|i| online_bellman_value(env.instance(i), env_config.capacity, env_config.step_limit))
                    .collect();
                let bound = bound.iter().sum::<f64>() / n as f64;
                bounds.push(format!(
                    "{} {label}: the best online policy that also knows the clock (Bellman) expects {bound:.1}, {:.2}% of the offline mean",
                    variant.id(),
                    100.0 * bound / reference
                ));
            }
            crate::progress::row_done(format!("{} {label} done", variant.id()));
        }
    }
    writeln!(report)?;
    for line in bounds {
        writeln!(report, "- {line}")?;
    }
    Ok(())
}

/// Env steps per second of our batch of `b` with random allowed actions (uniform on the box for
/// a continuous one): the median of 5
/// repeats of at least 0.3 s each.
fn our_rate(id: &str, b: usize) -> f64 {
    let mut env = rlsolver::problems::envs(Default::default()).make(id, b).expect("registered env");
    let space = env.action_space();
    let dim = env.observation_dim();
    let mask = env.layout().action_mask;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut obs = env.reset(1);
    let mut rates: Vec<f64> = (0..5)
        .map(|_| {
            let (start, mut steps) = (Instant::now(), 0usize);
            while start.elapsed().as_secs_f64() < 0.3 {
                let actions: Vec<f32> = match &space {
                    rlsolver::drl::env::ActionSpace::Discrete { n } => obs
                        .chunks(dim)
                        .map(|row| match mask {
                            Some(first) => random_allowed(&row[first..first + n], &mut rng),
                            None => rng.gen_range(0..*n) as f32,
                        })
                        .collect(),
                    rlsolver::drl::env::ActionSpace::Continuous { low, high } => (0..b)
                        .flat_map(|_| low.iter().zip(high).map(|(&l, &h)| rng.gen_range(l..=h)).collect::<Vec<_>>())
                        .collect(),
                };
                obs = env.step(&actions).observations;
                steps += b;
            }
            steps as f64 / start.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    super::median(&rates)
}

fn throughput(config: &OrGymBenchConfig, report: &mut String) -> Result<()> {
    let peer: Option<serde_json::Value> = match &config.peer {
        Some((python, script)) => {
            let batches: Vec<String> = config.batches.iter().map(usize::to_string).collect();
            Some(super::run_peer(python, script, &["--batches".into(), batches.join(",")])?)
        }
        None => None,
    };
    let header: String = config.batches.iter().map(|b| format!(" B = {b}: ours | or-gymnasium | ratio |")).collect();
    writeln!(report, "| env |{header}")?;
    writeln!(report, "|---|{}", "---|---|---|".repeat(config.batches.len()))?;
    let inventory = INVENTORY_IDS.map(|(id, _)| id);
    let ids = Variant::ALL
        .iter()
        .map(|v| v.id())
        .chain(BIN_PACKING_IDS)
        .chain(["Newsvendor-v0"])
        .chain(inventory)
        .chain(["PortfolioOpt-v0"])
        .chain(TSP_IDS.map(|(id, _)| id))
        .chain(VM_IDS.map(|(id, _)| id))
        .chain(["VehicleRouting-v0"]);
    for id in ids {
        let mut row = format!("| {id} |");
        for &b in &config.batches {
            let ours = our_rate(id, b);
            let theirs = peer.as_ref().and_then(|p| p[id][b.to_string()].as_f64());
            match theirs {
                Some(t) => write!(row, " {ours:.0} | {t:.0} | {:.0}x |", ours / t)?,
                None => write!(row, " {ours:.0} | - | - |")?,
            }
        }
        writeln!(report, "{row}")?;
    }
    Ok(())
}

/// The bin-packing settings: the id's defaults, then the same bins with another size mix
/// (the small envs' odds of a 2 moved to 0.6; the large envs' sizes uniform on 1..9).
fn binpacking_settings(id: &str) -> Vec<(String, BinPackingConfig)> {
    let default = BinPackingConfig::by_id(id).expect("registered id");
    let k = default.item_sizes.len();
    let changed_probs = if k == 2 { vec![0.6, 0.4] } else { vec![1.0 / k as f64; k] };
    let changed = BinPackingConfig { item_probs: changed_probs, ..default.clone() };
    let describe = |c: &BinPackingConfig| {
        let probs: Vec<String> = c.item_probs.iter().map(|p| format!("{p:.2}")).collect();
        format!("C {} sizes {:?} p [{}] T {}", c.bin_capacity, c.item_sizes, probs.join(", "), c.step_limit)
    };
    vec![(describe(&default), default), (describe(&changed), changed)]
}

/// "waste ± ci (failed)" of one policy's episodes: minus the return, so the -100 of an
/// impossible action counts.
fn waste_cell(packings: &[Packing]) -> String {
    let (mean, ci) = mean_ci(&wastes(packings));
    let failed = packings.iter().filter(|p| p.failed).count();
    if failed > 0 {
        format!("{mean:.1} ± {ci:.1} ({failed} failed)")
    } else {
        format!("{mean:.1} ± {ci:.1}")
    }
}

fn binpacking_quality(config: &OrGymBenchConfig, report: &mut String) -> Result<()> {
    let n = config.episodes;
    writeln!(
        report,
        "| env | parameters | policy waste ± 95% CI | sum of squares | best fit | random | offline lower bound | policy / sum of squares |"
    )?;
    writeln!(report, "|---|---|---|---|---|---|---|---|")?;
    for id in BIN_PACKING_IDS {
        for (label, env_config) in binpacking_settings(id) {
            let dir = config.models.join(format!("orgym-{}", id.to_lowercase()));
            let probe = BinPackingVecEnv::new(env_config.clone(), 1);
            let policy = match load_policy_for(&dir, tch::Device::Cpu, &probe) {
                Ok(mut agent) => Some(binpacking_rollout(&env_config, n, EVALUATION_SEED, &mut |obs, dim| {
                    greedy_actions(&mut agent, obs, dim)
                })),
                Err(error) => {
                    crate::progress::line(format!("{}: no policy ({error:#})", dir.display()));
                    None
                }
            };
            let heuristic = |action: fn(&BinPackingConfig, &[f32]) -> f32| {
                binpacking_rollout(&env_config, n, EVALUATION_SEED, &mut |obs, dim| {
                    obs.chunks(dim).map(|row| action(&env_config, row)).collect()
                })
            };
            let ss = heuristic(sum_of_squares_action);
            let best_fit = heuristic(best_fit_action);
            let mut rng = ChaCha8Rng::seed_from_u64(EVALUATION_SEED);
            let random = binpacking_rollout(&env_config, n, EVALUATION_SEED, &mut |obs, dim| {
                obs.chunks(dim).map(|row| random_allowed(&allowed_levels(&env_config, row), &mut rng)).collect()
            });
            let bound: Vec<f64> = ss.iter().map(|p| p.lower_bound as f64).collect();
            let (bound, bound_ci) = mean_ci(&bound);
            let (policy_cell, ratio) = match &policy {
                Some(p) => (waste_cell(p), format!("{:.3}", mean_ci(&wastes(p)).0 / mean_ci(&wastes(&ss)).0)),
                None => ("-".into(), "-".into()),
            };
            writeln!(
                report,
                "| {id} | {label} | {policy_cell} | {} | {} | {} | {bound:.1} ± {bound_ci:.1} | {ratio} |",
                waste_cell(&ss),
                waste_cell(&best_fit),
                waste_cell(&random),
            )?;
            crate::progress::row_done(format!("{id} {label} done"));
        }
    }
    Ok(())
}

/// The newsvendor settings: the defaults, a doubled demand range, and a shorter lead time (the
/// policy reads 5 + L columns, so it serves L = 5 only; the references run on every row).
fn newsvendor_settings() -> Vec<(String, NewsvendorConfig)> {
    let default = NewsvendorConfig::default();
    let describe =
        |c: &NewsvendorConfig| format!("L {} mu_max {} p_max {} T {}", c.lead_time, c.mu_max, c.p_max, c.step_limit);
    [
        default.clone(),
        NewsvendorConfig { mu_max: 400.0, ..default.clone() },
        NewsvendorConfig { lead_time: 2, ..default },
    ]
    .into_iter()
    .map(|c| (describe(&c), c))
    .collect()
}

fn newsvendor_quality(config: &OrGymBenchConfig, report: &mut String) -> Result<()> {
    let n = config.episodes;
    writeln!(
        report,
        "| env | parameters | policy: return ± 95% CI | % of optimal | critical fractile | % of optimal | optimal policy (DP with the clock) | its expectation | zero orders |"
    )?;
    writeln!(report, "|---|---|---|---|---|---|---|---|---|")?;
    let dir = config.models.join("orgym-newsvendor-v0");
    for (label, env_config) in newsvendor_settings() {
        let references = newsvendor_references(&env_config, n, EVALUATION_SEED);
        let (optimal, optimal_ci) = mean_ci(&references.optimal);
        let percent = |returns: &[f64]| 100.0 * mean_ci(returns).0 / optimal;
        let policy_cells = match newsvendor_policy_returns(&dir, &env_config, n, EVALUATION_SEED) {
            Ok(returns) => {
                let (mean, ci) = mean_ci(&returns);
                format!("{mean:.0} ± {ci:.0} | {:.1}", percent(&returns))
            }
            Err(error) => {
                crate::progress::line(format!("{}: no policy for {label} ({error:#})", dir.display()));
                "- | -".into()
            }
        };
        let zero = newsvendor_rollout(&env_config, n, EVALUATION_SEED, &mut |obs, dim, _| vec![0.0; obs.len() / dim]);
        let (fractile, fractile_ci) = mean_ci(&references.fractile);
        writeln!(
            report,
            "| Newsvendor-v0 | {label} | {policy_cells} | {fractile:.0} ± {fractile_ci:.0} | {:.1} | {optimal:.0} ± {optimal_ci:.0} | {:.0} | {:.0} |",
            percent(&references.fractile),
            mean_ci(&references.expected_optimal).0,
            mean_ci(&zero).0,
        )?;
        crate::progress::row_done(format!("Newsvendor-v0 {label} done"));
    }
    Ok(())
}

/// The inventory settings: the defaults, then a higher demand rate and shorter lead times.
fn inventory_settings(id: &str) -> Vec<(String, InventoryConfig)> {
    let default = InventoryConfig::by_id(id).expect("registered id");
    let describe = |c: &InventoryConfig| format!("mu {} L {:?} c {:?}", c.mean_demand, c.lead_time, c.capacity);
    [
        default.clone(),
        InventoryConfig { mean_demand: 30.0, ..default.clone() },
        InventoryConfig { lead_time: vec![2, 4, 10], ..default },
    ]
    .into_iter()
    .map(|c| (describe(&c), c))
    .collect()
}

fn inventory_quality(config: &OrGymBenchConfig, report: &mut String) -> Result<()> {
    let n = config.episodes;
    writeln!(
        report,
        "| env | parameters | policy: return ± 95% CI | best base stock (levels) | shrinking-horizon LP | policy / base stock | policy / LP | zero orders |"
    )?;
    writeln!(report, "|---|---|---|---|---|---|---|---|")?;
    for (id, _) in INVENTORY_IDS {
        let dir = config.models.join(format!("orgym-{}", id.to_lowercase()));
        for (label, env_config) in inventory_settings(id) {
            let (levels, base_stock) = inventory_base_stock(&env_config, n, EVALUATION_SEED);
            let (bs, bs_ci) = mean_ci(&base_stock);
            let (lp, lp_ci) = mean_ci(&shrinking_horizon_returns(&env_config, n, EVALUATION_SEED));
            let (policy_cell, ratio, lp_ratio) =
                match policy_returns::<Chain>(&dir, &env_config.policy_observation(), n, EVALUATION_SEED) {
                    Ok(returns) => {
                        let (mean, ci) = mean_ci(&returns);
                        (format!("{mean:.1} ± {ci:.1}"), format!("{:.3}", mean / bs), format!("{:.3}", mean / lp))
                    }
                    Err(error) => {
                        crate::progress::line(format!("{}: no policy for {label} ({error:#})", dir.display()));
                        ("-".into(), "-".into(), "-".into())
                    }
                };
            let zero = inventory_rollout(&env_config, n, EVALUATION_SEED, &mut |env, _, _| {
                vec![0.0; env.num_envs() * env_config.stages()]
            });
            let levels: Vec<String> = levels.iter().map(|z| format!("{z:.0}")).collect();
            writeln!(
                report,
                "| {id} | {label} | {policy_cell} | {bs:.1} ± {bs_ci:.1} ({}) | {lp:.1} ± {lp_ci:.1} | {ratio} | {lp_ratio} | {:.1} |",
                levels.join(", "),
                mean_ci(&zero).0
            )?;
            crate::progress::row_done(format!("{id} {label} done"));
        }
    }
    Ok(())
}

/// The PortfolioOpt settings: the defaults, doubled price noise, doubled transaction costs.
fn portfolio_settings() -> Vec<(String, PortfolioConfig)> {
    let default = PortfolioConfig::default();
    let doubled = |v: &[f64]| v.iter().map(|c| 2.0 * c).collect::<Vec<_>>();
    [
        ("defaults".to_string(), default.clone()),
        ("price std 0.9".to_string(), PortfolioConfig { price_std: 0.9, ..default.clone() }),
        (
            "costs x2".to_string(),
            PortfolioConfig { buy_cost: doubled(&default.buy_cost), sell_cost: doubled(&default.sell_cost), ..default },
        ),
    ]
    .into()
}

fn portfolio_quality(config: &OrGymBenchConfig, report: &mut String) -> Result<()> {
    let n = config.episodes;
    writeln!(
        report,
        "| env | parameters | policy: wealth ± 95% CI | % of oracle | shrinking-horizon LP | % of oracle | oracle (perfect information) | random: % of oracle |"
    )?;
    writeln!(report, "|---|---|---|---|---|---|---|---|")?;
    let dir = config.models.join("orgym-portfolioopt-v0");
    for (label, env_config) in portfolio_settings() {
        let oracle = oracle_wealths(&env_config, n, EVALUATION_SEED);
        let lp = portfolio_shrinking_horizon(&env_config, n, EVALUATION_SEED);
        let policy_cells = match policy_returns::<Portfolio>(&dir, &env_config.policy_observation(), n, EVALUATION_SEED)
        {
            Ok(wealth) => {
                let ((mean, ci), (ratio, ratio_ci)) = (mean_ci(&wealth), percent_of(&wealth, &oracle));
                format!("{mean:.0} ± {ci:.0} | {ratio:.1} ± {ratio_ci:.1}")
            }
            Err(error) => {
                crate::progress::line(format!("{}: no policy ({error:#})", dir.display()));
                "- | -".into()
            }
        };
        let mut rng = ChaCha8Rng::seed_from_u64(EVALUATION_SEED);
        let limit = env_config.max_trade;
        let random = portfolio_rollout(&env_config, n, EVALUATION_SEED, &mut |env, _, _| {
            (0..env.num_envs() * env_config.assets()).map(|_| rng.gen_range(-limit..=limit) as f32).collect()
        });
        let ((lp_mean, lp_ci), (lp_ratio, lp_ratio_ci)) = (mean_ci(&lp), percent_of(&lp, &oracle));
        let (oracle_mean, oracle_ci) = mean_ci(&oracle);
        writeln!(
            report,
            "| PortfolioOpt-v0 | {label} | {policy_cells} | {lp_mean:.0} ± {lp_ci:.0} | {lp_ratio:.1} ± {lp_ratio_ci:.1} | {oracle_mean:.0} ± {oracle_ci:.0} | {:.1} |",
            percent_of(&random, &oracle).0
        )?;
        crate::progress::row_done(format!("PortfolioOpt-v0 {label} done"));
    }
    Ok(())
}

/// The TSP settings: each id at 50 nodes (the reference's) and 100; TSP-v1 with the length as a
/// cost (`negate_distance`), which the routing reference minimizes.
fn tsp_settings() -> Vec<(&'static str, String, TspConfig)> {
    TSP_IDS
        .iter()
        .flat_map(|&(id, distance_cost)| {
            [50, 100].map(|nodes| {
                let config =
                    TspConfig { nodes, negate_distance: distance_cost, ..TspConfig::by_id(id).expect("registered") };
                let label = if distance_cost { format!("N {nodes}, reward -length") } else { format!("N {nodes}") };
                (id, label, config)
            })
        })
        .collect()
}

fn tsp_quality(config: &OrGymBenchConfig, report: &mut String) -> Result<()> {
    let n = config.episodes;
    writeln!(report, "| env | parameters | policy: return ± 95% CI | routing reference: return ± 95% CI | policy / reference | random valid move: return | bound |")?;
    writeln!(report, "|---|---|---|---|---|---|---|")?;
    for (id, label, env_config) in tsp_settings() {
        let reference = tsp_reference_returns(&env_config, n, EVALUATION_SEED);
        let dir = config.models.join(format!("orgym-{}", id.to_lowercase()));
        let featured = env_config.policy_observation();
        let (policy_cell, ratio) = match policy_returns::<Walk>(&dir, &featured, n, EVALUATION_SEED) {
            Ok(returns) => {
                let (mean, ci) = mean_ci(&returns);
                (format!("{mean:.3} ± {ci:.3}"), format!("{:.3}", mean / mean_ci(&reference).0))
            }
            Err(error) => {
                crate::progress::line(format!("{}: no policy ({error:#})", dir.display()));
                ("-".into(), "-".into())
            }
        };
        let mut rng = ChaCha8Rng::seed_from_u64(EVALUATION_SEED);
        let random = tsp_rollout(&env_config, n, EVALUATION_SEED, &mut |env, _, _| {
            (0..env.num_envs())
                .map(|i| {
                    let walk = env.episode(i);
                    let valid: Vec<usize> = (0..env_config.nodes)
                        .filter(|&m| match &walk.graph {
                            rlsolver::problems::orgym::tsp::env::Graph::Sparse(adjacency) => adjacency[walk.current][m],
                            rlsolver::problems::orgym::tsp::env::Graph::Euclidean(_) => walk.visits[m] == 0,
                        })
                        .collect();
                    if valid.is_empty() {
                        0.0
                    } else {
                        valid[rng.gen_range(0..valid.len())] as f32
                    }
                })
                .collect()
        });
        let ((mean, ci), (random_mean, _)) = (mean_ci(&reference), mean_ci(&random));
        let bound = if env_config.distance_cost {
            "-".to_string()
        } else {
            format!(
                "{:.0} (N - 1 moves)",
                env_config.completion_bonus + env_config.move_cost * (env_config.nodes - 1) as f64
            )
        };
        writeln!(
            report,
            "| {id} | {label} | {policy_cell} | {mean:.3} ± {ci:.3} | {ratio} | {random_mean:.3} | {bound} |"
        )?;
        crate::progress::row_done(format!("{id} {label} done"));
    }
    Ok(())
}

/// The VM-packing settings: the id's defaults, then CPU demands twice as large.
fn vm_settings(id: &str) -> Vec<(String, VmPackingConfig)> {
    let default = VmPackingConfig::by_id(id).expect("registered id");
    let describe =
        |c: &VmPackingConfig| format!("{} PMs, {} VMs, cpu {}% ± {}", c.machines, c.step_limit, c.cpu_mean, c.cpu_std);
    let larger = VmPackingConfig { cpu_mean: 32.0, cpu_std: 2.5, ..default.clone() };
    vec![(describe(&default), default), (describe(&larger), larger)]
}

fn vmpacking_quality(config: &OrGymBenchConfig, report: &mut String) -> Result<()> {
    let n = config.episodes;
    writeln!(report, "| env | parameters | policy: return ± 95% CI (overloads) | first fit | best fit | policy / best fit (free capacity) | random allowed |")?;
    writeln!(report, "|---|---|---|---|---|---|---|")?;
    for (id, _) in VM_IDS {
        let dir = config.models.join(format!("orgym-{}", id.to_lowercase()));
        for (label, env_config) in vm_settings(id) {
            let (first, first_ci) = mean_ci(&rule_returns(&env_config, n, EVALUATION_SEED, Rule::FirstFit));
            let (best, best_ci) = mean_ci(&rule_returns(&env_config, n, EVALUATION_SEED, Rule::BestFit));
            let (policy_cell, ratio) = match policy_returns::<DataCenter>(&dir, &env_config, n, EVALUATION_SEED) {
                Ok(returns) => {
                    let (mean, ci) = mean_ci(&returns);
                    let overloads = returns.iter().filter(|&&r| r <= -1000.0).count();
                    (format!("{mean:.1} ± {ci:.1} ({overloads})"), format!("{:.3}", mean / best))
                }
                Err(error) => {
                    crate::progress::line(format!("{}: no policy ({error:#})", dir.display()));
                    ("-".into(), "-".into())
                }
            };
            let mut rng = ChaCha8Rng::seed_from_u64(EVALUATION_SEED);
            let random = vm_rollout(&env_config, n, EVALUATION_SEED, &mut |_, obs, dim| {
                obs.chunks(dim).map(|row| random_allowed(&row[..env_config.machines], &mut rng)).collect()
            });
            writeln!(
                report,
                "| {id} | {label} | {policy_cell} | {first:.1} ± {first_ci:.1} | {best:.1} ± {best_ci:.1} | {ratio} | {:.1} |",
                mean_ci(&random).0
            )?;
            crate::progress::row_done(format!("{id} {label} done"));
        }
    }
    Ok(())
}

fn routing_quality(config: &OrGymBenchConfig, report: &mut String) -> Result<()> {
    let n = config.episodes;
    writeln!(
        report,
        "| env | parameters | policy: return ± 95% CI | dispatcher | policy / dispatcher | uniform actions |"
    )?;
    writeln!(report, "|---|---|---|---|---|---|")?;
    let dir = config.models.join("orgym-vehiclerouting-v0");
    let default = VehicleRoutingConfig::default();
    let busier = VehicleRoutingConfig { order_prob: 0.8, order_timeout_prob: 0.05, ..default.clone() };
    for (label, env_config) in [("defaults", default), ("order prob 0.8, timeout 0.05", busier)] {
        let (reference, reference_ci) = mean_ci(&dispatcher_returns(&env_config, n, EVALUATION_SEED));
        let (policy_cell, ratio) = match policy_returns::<Dispatch>(&dir, &env_config, n, EVALUATION_SEED) {
            Ok(returns) => {
                let (mean, ci) = mean_ci(&returns);
                (format!("{mean:.1} ± {ci:.1}"), format!("{:.3}", mean / reference))
            }
            Err(error) => {
                crate::progress::line(format!("{}: no policy ({error:#})", dir.display()));
                ("-".into(), "-".into())
            }
        };
        let mut rng = ChaCha8Rng::seed_from_u64(EVALUATION_SEED);
        let actions = env_config.action_count();
        let uniform = routing_rollout(&env_config, n, EVALUATION_SEED, &mut |env, _, _| {
            (0..env.num_envs()).map(|_| rng.gen_range(0..actions) as f32).collect()
        });
        writeln!(
            report,
            "| VehicleRouting-v0 | {label} | {policy_cell} | {reference:.1} ± {reference_ci:.1} | {ratio} | {:.1} |",
            mean_ci(&uniform).0
        )?;
        crate::progress::row_done(format!("VehicleRouting-v0 {label} done"));
    }
    Ok(())
}

pub fn run_orgym(config: &OrGymBenchConfig) -> Result<String> {
    if let Some(unknown) = config.only.iter().find(|s| !SECTIONS.contains(&s.as_str())) {
        anyhow::bail!("{}", rlsolver::suggest::unknown("section", unknown, SECTIONS.iter().copied()));
    }
    let wanted = |section: &str| config.only.is_empty() || config.only.iter().any(|s| s == section);
    let n = config.episodes;
    let mut report = String::new();
    writeln!(
        report,
        "Policy vs reference: mean over {n} evaluation episodes (seed {EVALUATION_SEED}, never trained on), \
         each on a fresh instance of the class; % of reference = mean of per-episode return / reference.\n"
    )?;
    if wanted("knapsack") {
        quality(config, &Variant::ALL, &mut report)?;
    } else if wanted("knapsack-online") {
        // Knapsack-v3's rows alone (the 500-item rows of v0-v2 take most of the section's time).
        quality(config, &[Variant::Online], &mut report)?;
    }
    if wanted("binpacking") {
        writeln!(
            report,
            "\nBin packing: waste per episode (free space in the bins opened; an impossible action's -100 counted), \
             same {n} evaluation episodes per row; the policy is greedy (argmax).\n"
        )?;
        binpacking_quality(config, &mut report)?;
    }
    if wanted("newsvendor") {
        writeln!(
            report,
            "\nNewsvendor: mean episode return over the same {n} evaluation episodes per row (economics drawn per \
             episode); the optimal policy knows the clock, the policy does not.\n"
        )?;
        newsvendor_quality(config, &mut report)?;
    }
    if wanted("inventory") {
        writeln!(
            report,
            "\nInventory management: mean discounted episode return over the same {n} evaluation episodes per row; \
             base-stock levels tuned by pattern search on 200 other episodes; the shrinking-horizon LP re-plans every \
             period with future demand at its mean; the policy reads the planning features (periods left, backlogs, \
             pipelines).\n"
        )?;
        inventory_quality(config, &mut report)?;
    }
    if wanted("portfolio") {
        writeln!(
            report,
            "\nPortfolio: final wealth (from 100 cash) over the same {n} evaluation episodes per row; the oracle knows \
             every period's prices (an upper bound), the shrinking-horizon LP today's, with later ones at their means; \
             % of oracle = mean of per-episode ratios; the policy reads the planning features (periods left, mean \
             prices to come).\n"
        )?;
        portfolio_quality(config, &mut report)?;
    }
    if wanted("tsp") {
        writeln!(
            report,
            "\nTSP: mean episode return over the same {n} evaluation episodes per row, a fresh graph each; the \
             routing reference is TSP-v0's breadth-first walk to the nearest unvisited node and TSP-v1's nearest \
             neighbour + 2-opt path; the policy (PPO on the node features, TSP-v1's trained on minus the length) \
             walks greedily; policy / reference is a ratio of returns (TSP-v1: of lengths, below 1 is shorter).\n"
        )?;
        tsp_quality(config, &mut report)?;
    }
    if wanted("vmpacking") {
        writeln!(
            report,
            "\nVM packing: mean episode return (minus the free capacity of the open machines, summed over the \
             steps; an overload's -1000 counted) over the same {n} evaluation episodes per row; policy / best fit \
             is a ratio of free capacities (below 1: the policy wastes less).\n"
        )?;
        vmpacking_quality(config, &mut report)?;
    }
    if wanted("routing") {
        writeln!(
            report,
            "\nVehicle routing: mean episode return (1000 steps) over the same {n} evaluation episodes per row; the \
             dispatcher is the greedy accept / pick up / deliver-nearest rule.\n"
        )?;
        routing_quality(config, &mut report)?;
    }
    if wanted("throughput") {
        writeln!(report, "\nEnv steps per second (random allowed actions; median of 5 repeats):\n")?;
        throughput(config, &mut report)?;
    }
    Ok(report)
}

/// `rlsolver bench orgym`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_orgym(&OrGymBenchConfig {
        peer: args
            .python
            .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/orgym_peer.py".into()))),
        episodes: args.episodes,
        only: args.only,
        ..Default::default()
    })
}

//! The multi-agent table, behind `make verify`: the two-step game over 5 seeds, and
//! simple_spread per algorithm over 3 seeds against a uniformly random policy and the matching
//! heuristic (the bar: close at least 80% of the gap from random to the heuristic). Each test
//! prints its table row.

use rlsolver::drl::marl::run::{heuristic_return, random_policy_return, train, MarlConfig};
use serde_json::json;

#[test]
#[ignore]
fn qmix_reaches_the_two_step_optimum_in_every_seed_and_vdn_settles_for_7() {
    for algorithm in ["qmix", "vdn"] {
        let returns: Vec<f64> = (0..5)
            .map(|seed| {
                let config = MarlConfig {
                    eval_every: 8_000,
                    eval_episodes: 8,
                    overrides: json!({"epsilon_start": 1.0, "epsilon_end": 1.0, "target_update_interval": 50, "td_lambda": 0.0}),
                    ..MarlConfig::new(algorithm, "two_step", 8_000, seed)
                };
                train(&config).unwrap().evaluations.last().unwrap().return_mean
            })
            .collect();
        println!("| {algorithm} | two_step | 8000 | {returns:?} |");
        if algorithm == "qmix" {
            assert!(returns.iter().all(|&r| r >= 7.9), "QMIX returns {returns:?}");
        } else {
            // VDN's additive value cannot represent the second state's payoff matrix, so it
            // settles on the safe branch's 7 (Rashid et al. 2018, Table 1).
            assert!(returns.iter().all(|&r| (6.9..=7.1).contains(&r)), "VDN returns {returns:?}");
        }
    }
}

fn closes_the_gap(algorithm: &str, env_id: &str, steps: usize, overrides: serde_json::Value) {
    let episodes = 64;
    let (random, _) = random_policy_return(env_id, episodes, 12_345).unwrap();
    let (heuristic, _) = heuristic_return(env_id, episodes, 12_345).unwrap();
    let mut finals = Vec::new();
    let mut wall = 0.0;
    for seed in 0..3 {
        let config = MarlConfig {
            eval_every: steps / 10,
            eval_episodes: episodes,
            overrides: overrides.clone(),
            ..MarlConfig::new(algorithm, env_id, steps, seed)
        };
        let outcome = train(&config).unwrap();
        finals.push(outcome.evaluations.last().unwrap().return_mean);
        wall += outcome.wall_s;
    }
    let mean = finals.iter().sum::<f64>() / finals.len() as f64;
    let closed = (mean - random) / (heuristic - random);
    println!(
        "| {algorithm} | {env_id} | {steps} | {mean:.1} ({}) | {random:.1} | {heuristic:.1} | {:.0}% | {:.0} |",
        finals.iter().map(|r| format!("{r:.1}")).collect::<Vec<_>>().join(", "),
        100.0 * closed,
        wall / 3.0
    );
    assert!(closed >= 0.8, "{algorithm} on {env_id} closes {:.0}% of the gap", 100.0 * closed);
}

#[test]
#[ignore]
fn maddpg_closes_80_percent_of_the_gap_on_simple_spread() {
    closes_the_gap("maddpg", "simple_spread", 2_000_000, json!({}));
}

#[test]
#[ignore]
fn matd3_closes_80_percent_of_the_gap_on_simple_spread() {
    closes_the_gap("matd3", "simple_spread", 2_000_000, json!({}));
}

#[test]
#[ignore]
fn mappo_closes_80_percent_of_the_gap_on_simple_spread() {
    // On-policy: at constant learning rates 2M steps close 61% and 20M 79% (README, 42 minutes
    // per seed on one thread); the linear decay to zero over the run (MAPPO's
    // use_linear_lr_decay) reached -32.5 at 5M on seed 0 against -35.7 without it.
    let steps = 10_000_000;
    closes_the_gap("mappo", "simple_spread", steps, json!({"lr_decay_steps": steps}));
}

#[test]
#[ignore]
fn qmix_closes_80_percent_of_the_gap_on_simple_spread() {
    closes_the_gap("qmix", "simple_spread", 2_000_000, json!({}));
}

#[test]
#[ignore]
fn vdn_closes_80_percent_of_the_gap_on_simple_spread() {
    closes_the_gap("vdn", "simple_spread", 2_000_000, json!({}));
}

#[test]
#[ignore]
fn maddpg_closes_80_percent_of_the_gap_on_continuous_simple_spread() {
    // 2M steps close 74% here (README), 4M 81%.
    closes_the_gap("maddpg", "simple_spread_continuous", 4_000_000, json!({}));
}

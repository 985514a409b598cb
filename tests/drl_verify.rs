//! The deep-RL threshold table, behind `make verify` (`cargo test --release -- --ignored`):
//! deterministic evaluation over 10 fresh episodes, seeds 0, 1 and 2, stop at the threshold once
//! 100 further episodes confirm it. Each test prints one table row per seed and fails when any
//! seed misses its threshold.

use rlsolver::drl::run::{train, TrainConfig};

const SEEDS: [u64; 3] = [0, 1, 2];

fn reaches(algorithm: &str, env_id: &str, threshold: f64, budget: usize, eval_every: usize) {
    let mut missed = Vec::new();
    for seed in SEEDS {
        let config = TrainConfig {
            eval_every,
            target_return: Some(threshold),
            ..TrainConfig::new(algorithm, env_id, budget, seed)
        };
        let outcome = train(&config).unwrap();
        let best = outcome.evaluations.iter().map(|e| e.return_mean).fold(f64::NEG_INFINITY, f64::max);
        let confirmed =
            outcome.evaluations.iter().rev().find_map(|e| e.confirmation).map_or("-".into(), |c| format!("{:.1}", c.0));
        println!(
            "| {algorithm} | {env_id} | {seed} | {threshold} | {budget} | {} | {best:.1} | {confirmed} | {:.1} |",
            outcome.reached_target_at.map_or("not reached".into(), |s| s.to_string()),
            outcome.wall_s
        );
        if outcome.reached_target_at.is_none() {
            missed.push(format!("seed {seed}: best {best:.1}"));
        }
    }
    assert!(missed.is_empty(), "{algorithm} on {env_id} < {threshold} within {budget} steps: {missed:?}");
}

#[test]
#[ignore]
fn ppo_discrete_solves_cartpole_within_100k() {
    reaches("ppo_discrete", "CartPole-v1", 475.0, 100_000, 5_000);
}

#[test]
#[ignore]
fn dqn_solves_cartpole_within_100k() {
    reaches("dqn", "CartPole-v1", 475.0, 100_000, 5_000);
}

#[test]
#[ignore]
fn double_dqn_solves_cartpole_within_100k() {
    reaches("double_dqn", "CartPole-v1", 475.0, 100_000, 5_000);
}

#[test]
#[ignore]
fn d3qn_solves_cartpole_within_100k() {
    reaches("d3qn", "CartPole-v1", 475.0, 100_000, 5_000);
}

#[test]
#[ignore]
fn a2c_discrete_solves_cartpole_within_500k() {
    reaches("a2c_discrete", "CartPole-v1", 475.0, 500_000, 10_000);
}

#[test]
#[ignore]
fn dqn_reaches_minus_100_on_acrobot_within_100k() {
    reaches("d3qn", "Acrobot-v1", -100.0, 100_000, 5_000);
}

#[test]
#[ignore]
fn sac_reaches_minus_200_on_pendulum_within_20k() {
    reaches("sac", "Pendulum-v1", -200.0, 20_000, 1_000);
}

#[test]
#[ignore]
fn td3_reaches_minus_200_on_pendulum_within_20k() {
    reaches("td3", "Pendulum-v1", -200.0, 20_000, 1_000);
}

#[test]
#[ignore]
fn ddpg_reaches_minus_200_on_pendulum_within_20k() {
    reaches("ddpg", "Pendulum-v1", -200.0, 20_000, 1_000);
}

#[test]
#[ignore]
fn redq_reaches_minus_200_on_pendulum_within_10k() {
    reaches("redq", "Pendulum-v1", -200.0, 10_000, 1_000);
}

#[test]
#[ignore]
fn ppo_reaches_minus_200_on_pendulum_within_200k() {
    reaches("ppo", "Pendulum-v1", -200.0, 200_000, 10_000);
}

#[test]
#[ignore]
fn a2c_reaches_minus_200_on_pendulum_within_500k() {
    reaches("a2c", "Pendulum-v1", -200.0, 500_000, 20_000);
}

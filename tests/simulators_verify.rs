//! The simulator rows, behind `make verify` (`cargo test --release -- --ignored`): each
//! task of `bench::simulators::TASKS` at its full budget, ours through the Gymnasium bridge and
//! Stable-Baselines3 by the peer script with the same hyperparameters, seeds 0-2. The goal is
//! our median final return at least SB3's (within 10% of its magnitude: three seeds cannot
//! resolve less); each test prints both sides and the training seconds.

use rlsolver::bench::simulators::{median_worst, our_run, peer_runs, TASKS};
use std::path::PathBuf;

const SEEDS: [u64; 3] = [0, 1, 2];

fn matches_sb3(algorithm: &str, env: &str) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let task = TASKS.iter().find(|t| t.algorithm == algorithm && t.env == env).expect("a task of the table").clone();
    let python = root.join(".venv/bin/python");
    let script = root.join("benches/peers/sb3_simulators_peer.py");
    let peer = peer_runs(&python, &script, &[(task.clone(), task.budget)], &SEEDS).expect("SB3 runs (make simulators)");
    let theirs: Vec<f64> = peer.runs.iter().map(|r| r.final_return).collect();
    let ours: Vec<_> = SEEDS.iter().map(|&s| our_run(algorithm, env, task.budget, s, 0.0).unwrap()).collect();
    let (our_median, our_worst) = median_worst(&ours.iter().map(|r| r.final_return).collect::<Vec<_>>());
    let (their_median, their_worst) = median_worst(&theirs);
    let our_s: f64 = ours.iter().map(|r| r.train_s).sum::<f64>() / ours.len() as f64;
    let their_s: f64 = peer.runs.iter().map(|r| r.train_s).sum::<f64>() / peer.runs.len() as f64;
    println!(
        "| {algorithm} {env} | {} | ours {our_median:.1} ({our_worst:.1}) | SB3 {their_median:.1} ({their_worst:.1}) | {our_s:.0} s vs {their_s:.0} s |",
        task.budget
    );
    assert!(
        our_median >= their_median - 0.1 * their_median.abs(),
        "{algorithm} {env}: our median {our_median:.1} below SB3's {their_median:.1}"
    );
}

#[test]
#[ignore]
fn sac_inverted_pendulum() {
    matches_sb3("sac", "InvertedPendulum-v5");
}

#[test]
#[ignore]
fn td3_inverted_pendulum() {
    matches_sb3("td3", "InvertedPendulum-v5");
}

#[test]
#[ignore]
fn ppo_inverted_double_pendulum() {
    matches_sb3("ppo", "InvertedDoublePendulum-v5");
}

#[test]
#[ignore]
fn sac_hopper() {
    matches_sb3("sac", "Hopper-v5");
}

#[test]
#[ignore]
fn td3_hopper() {
    matches_sb3("td3", "Hopper-v5");
}

#[test]
#[ignore]
fn sac_pybullet_hopper() {
    matches_sb3("sac", "pybullet_envs_gymnasium:HopperBulletEnv-v0");
}

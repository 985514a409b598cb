//! Fast subset of the multi-agent proofs (`make verify` holds the full table): the QMIX paper's
//! two-step game result, the baselines' ordering on simple_spread, and short runs of every
//! algorithm that improve on the random policy.

use rlsolver::drl::marl::run::{heuristic_return, random_policy_return, train, MarlConfig};
use serde_json::json;
use std::sync::Mutex;

/// Network initialization and exploration noise draw from libtorch's one global generator, so
/// runs in parallel test threads would interleave their draws and stop being reproducible:
/// the tests of this file take turns.
static TORCH_RNG: Mutex<()> = Mutex::new(());

fn uniform_exploration(algorithm: &str) -> MarlConfig {
    // The paper's setting for this game: uniform exploration (epsilon = 1) throughout, one-step
    // targets (TD(lambda) under uniform exploration rates state 2B by the random play's 2.5
    // rather than its optimum 8, and QMIX then settles for 7 as VDN does).
    MarlConfig {
        eval_every: 8_000,
        eval_episodes: 8,
        overrides: json!({"epsilon_start": 1.0, "epsilon_end": 1.0, "target_update_interval": 50, "td_lambda": 0.0}),
        ..MarlConfig::new(algorithm, "two_step", 8_000, 0)
    }
}

#[test]
fn qmix_learns_the_optimal_two_step_return_and_vdn_does_not() {
    let _turn = TORCH_RNG.lock().unwrap_or_else(|e| e.into_inner());
    tch::set_num_threads(1);
    let qmix = train(&uniform_exploration("qmix")).unwrap();
    let vdn = train(&uniform_exploration("vdn")).unwrap();
    let (q, v) = (qmix.evaluations.last().unwrap().return_mean, vdn.evaluations.last().unwrap().return_mean);
    assert!(q >= 7.9, "QMIX greedy return {q}");
    assert!((v - 7.0).abs() < 0.1, "VDN greedy return {v} (the paper: 7)");
}

#[test]
fn the_matching_heuristic_beats_random_actions_on_simple_spread() {
    for env in ["simple_spread", "simple_spread_continuous"] {
        let (random, _) = random_policy_return(env, 64, 3).unwrap();
        let (heuristic, _) = heuristic_return(env, 64, 3).unwrap();
        eprintln!("{env}: random {random:.1}, heuristic {heuristic:.1}");
        assert!(heuristic > random + 20.0, "{env}: heuristic {heuristic} vs random {random}");
    }
}

#[test]
fn every_algorithm_trains_briefly_on_simple_spread_with_finite_losses_and_beats_random() {
    let _turn = TORCH_RNG.lock().unwrap_or_else(|e| e.into_inner());
    tch::set_num_threads(1);
    let runs = [
        ("mappo", "simple_spread", 40_000, json!({})),
        ("mappo", "simple_spread_continuous", 40_000, json!({})),
        ("maddpg", "simple_spread", 40_000, json!({"learning_starts": 4096, "batch_size": 256})),
        ("matd3", "simple_spread_continuous", 40_000, json!({"learning_starts": 4096, "batch_size": 256})),
        ("qmix", "simple_spread", 150_000, json!({"epsilon_anneal_steps": 50_000, "updates_per_collection": 1})),
        ("vdn", "simple_spread", 150_000, json!({"epsilon_anneal_steps": 50_000, "updates_per_collection": 1})),
    ];
    for (algorithm, env, steps, overrides) in runs {
        let (random, _) = random_policy_return(env, 32, 7).unwrap();
        let config =
            MarlConfig { eval_every: steps, eval_episodes: 32, overrides, ..MarlConfig::new(algorithm, env, steps, 0) };
        let outcome = train(&config).unwrap();
        let last = outcome.evaluations.last().unwrap();
        for (name, value) in last.losses.as_object().unwrap() {
            assert!(value.as_f64().is_some_and(f64::is_finite), "{algorithm}: {name} = {value}");
        }
        eprintln!("{algorithm} {env}: {:.1} after {steps} steps (random {random:.1})", last.return_mean);
        assert!(last.return_mean > random + 3.0, "{algorithm} on {env}: {} vs random {random}", last.return_mean);
    }
}

//! Fast subset of the multi-agent proofs (`make verify` holds the full table): the QMIX paper's
//! two-step game result, the baselines' ordering on simple_spread, and short runs of every
//! algorithm that improve on the random policy.

mod common;

use rlsolver::drl::marl::run::{heuristic_return, random_policy_return, train, MarlConfig};
use serde_json::json;

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
fn every_algorithm_trains_briefly_on_simple_spread_with_finite_losses_and_its_median_seed_beats_random() {
    tch::set_num_threads(1);
    let runs = [
        ("mappo", "simple_spread", 40_000, json!({})),
        ("mappo", "simple_spread_continuous", 40_000, json!({})),
        ("maddpg", "simple_spread", 40_000, json!({"learning_starts": 4096, "batch_size": 256})),
        ("matd3", "simple_spread_continuous", 80_000, json!({"learning_starts": 4096, "batch_size": 256})),
        ("qmix", "simple_spread", 150_000, json!({"epsilon_anneal_steps": 50_000, "updates_per_collection": 1})),
        ("vdn", "simple_spread", 150_000, json!({"epsilon_anneal_steps": 50_000, "updates_per_collection": 1})),
    ];
    for (algorithm, env, steps, overrides) in runs {
        let (random, _) = random_policy_return(env, 32, 7).unwrap();
        // Short runs vary with the seed: the median over three seeds must beat random.
        let mut finals: Vec<f64> = (0..3)
            .map(|seed| {
                let config = MarlConfig {
                    eval_every: steps,
                    eval_episodes: 32,
                    overrides: overrides.clone(),
                    ..MarlConfig::new(algorithm, env, steps, seed)
                };
                let outcome = train(&config).unwrap();
                let last = outcome.evaluations.last().unwrap();
                for (name, value) in last.losses.as_object().unwrap() {
                    assert!(value.as_f64().is_some_and(f64::is_finite), "{algorithm}: {name} = {value}");
                }
                last.return_mean
            })
            .collect();
        finals.sort_by(f64::total_cmp);
        eprintln!("{algorithm} {env}: {finals:.1?} after {steps} steps (random {random:.1})");
        assert!(finals[1] > random + 3.0, "{algorithm} on {env}: median {} vs random {random}", finals[1]);
    }
}

#[test]
fn a_resumed_multi_agent_run_continues_exactly_and_its_checkpoint_evaluates() {
    tch::set_num_threads(1);
    let runs = [
        ("qmix", "simple_spread", 2_000, json!({"batch_episodes": 8, "updates_per_collection": 1})),
        ("mappo", "simple_spread_continuous", 3_200, json!({})),
        ("maddpg", "simple_spread", 2_000, json!({"learning_starts": 800, "batch_size": 64, "buffer_size": 10_000})),
    ];
    for (algorithm, env, half, overrides) in runs {
        let base = std::env::temp_dir().join(format!("rlsolver-marl-exact-{algorithm}-{}", std::process::id()));
        let config = |dir: &std::path::Path, resume| MarlConfig {
            eval_every: half,
            eval_episodes: 8,
            overrides: overrides.clone(),
            out_dir: Some(dir.to_path_buf()),
            resume,
            ..MarlConfig::new(algorithm, env, 2 * half, 3)
        };
        let whole = train(&config(&base.join("whole"), false)).unwrap();
        let stopped =
            train(&MarlConfig { hooks: common::stop_at(half), ..config(&base.join("split"), false) }).unwrap();
        assert_eq!((stopped.steps, stopped.cancelled), (half, true), "{algorithm}");
        let resumed = train(&config(&base.join("split"), true)).unwrap();
        let returns = |o: &rlsolver::drl::marl::run::MarlOutcome| {
            o.evaluations.iter().map(|e| (e.step, e.return_mean)).collect::<Vec<_>>()
        };
        assert_eq!(returns(&resumed), returns(&whole), "{algorithm}");
        let (a, b) = (common::policy_weights(&base.join("whole")), common::policy_weights(&base.join("split")));
        assert!(!a.is_empty() && a.len() == b.len(), "{algorithm}");
        for ((name, x), (_, y)) in a.iter().zip(&b) {
            assert!(x.equal(y), "{algorithm}: {name} differs after the resume");
        }
        // `rlsolver evaluate --checkpoint` on a multi-agent folder: the last evaluation again.
        let (mut learner, env_id) = rlsolver::drl::run::load_checkpoint(
            &base.join("whole"),
            tch::Device::Cpu,
            &rlsolver::problems::envs(Default::default()),
        )
        .unwrap();
        let last = whole.evaluations.last().unwrap();
        let (mean, _) = rlsolver::drl::run::evaluate_learner(
            &mut learner,
            &env_id,
            &serde_json::Value::Null,
            8,
            last.eval_seed,
            tch::Device::Cpu,
            &rlsolver::problems::envs(Default::default()),
        )
        .unwrap();
        assert_eq!(mean, last.return_mean, "{algorithm}: the reloaded policy differs");
        let _ = std::fs::remove_dir_all(&base);
    }
}

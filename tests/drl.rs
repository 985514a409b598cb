//! Fast subset of the deep-RL proofs (the threshold runs are `#[ignore]`d: `make verify`):
//! every algorithm trains a few thousand steps with finite losses and ends clearly above a
//! uniformly random policy on the same evaluation episodes.

use rand::{Rng, SeedableRng};
use rlsolver::drl::env::ActionSpace;
use rlsolver::drl::run::{evaluate, train, TrainConfig, TrainOutcome};
use serde_json::{json, Value};
use tch::{Device, Tensor};

fn config(algorithm: &str, env_id: &str, steps: usize, overrides: Value) -> TrainConfig {
    TrainConfig { eval_every: steps, overrides, ..TrainConfig::new(algorithm, env_id, steps, 0) }
}

/// Mean return of uniformly random actions on the training runs' evaluation episodes.
fn random_return(env_id: &str) -> f64 {
    let env = rlsolver::drl::env::make(env_id, 1).unwrap();
    let space = env.action_space();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut act = |obs: &Tensor| {
        let b = obs.size()[0] as usize;
        let actions: Vec<f32> = match &space {
            ActionSpace::Discrete { n } => (0..b).map(|_| rng.gen_range(0..*n) as f32).collect(),
            ActionSpace::Continuous { low, high } => (0..b).map(|_| rng.gen_range(low[0]..=high[0])).collect(),
        };
        Tensor::from_slice(&actions).view([b as i64, -1])
    };
    evaluate(env_id, 10, rlsolver::drl::run::evaluation_seed(0, 0), Device::Cpu, &mut act).0
}

/// Losses finite at every evaluation; the best deterministic evaluation of the run beats a
/// random policy by `margin` (short runs of value-based agents oscillate, so not the last one).
fn check(outcome: &TrainOutcome, env_id: &str, margin: f64) {
    for evaluation in &outcome.evaluations {
        for (name, value) in evaluation.losses.as_object().unwrap() {
            assert!(value.as_f64().is_some_and(f64::is_finite), "{name} = {value} at step {}", evaluation.step);
        }
    }
    let best = outcome.evaluations.iter().map(|e| e.return_mean).fold(f64::NEG_INFINITY, f64::max);
    let random = random_return(env_id);
    eprintln!("{env_id}: best return {best} (random {random})");
    assert!(best > random + margin, "best return {best} vs random {random}");
}

#[test]
fn dqn_family_and_ppo_discrete_learn_cartpole_beyond_random() {
    tch::set_num_threads(1);
    for algorithm in ["dqn", "double_dqn", "d3qn"] {
        let run = TrainConfig {
            learning_starts: Some(500),
            eval_every: 5000,
            ..config(algorithm, "CartPole-v1", 20_000, json!({}))
        };
        check(&train(&run).unwrap(), "CartPole-v1", 50.0);
    }
    let outcome = train(&config("ppo_discrete", "CartPole-v1", 10_000, json!({}))).unwrap();
    check(&outcome, "CartPole-v1", 80.0);
    let outcome = train(&config("a2c_discrete", "CartPole-v1", 20_000, json!({}))).unwrap();
    check(&outcome, "CartPole-v1", 20.0);
}

#[test]
fn off_policy_continuous_agents_learn_pendulum_beyond_random() {
    tch::set_num_threads(1);
    let small = json!({"hidden": [64, 64]});
    for (algorithm, steps) in [("ddpg", 5000), ("td3", 5000), ("sac", 5000)] {
        let run = TrainConfig { learning_starts: Some(500), ..config(algorithm, "Pendulum-v1", steps, small.clone()) };
        check(&train(&run).unwrap(), "Pendulum-v1", 200.0);
    }
    let redq = TrainConfig {
        learning_starts: Some(300),
        ..config("redq", "Pendulum-v1", 1500, json!({"hidden": [64, 64], "batch_size": 128}))
    };
    check(&train(&redq).unwrap(), "Pendulum-v1", 200.0);
}

#[test]
fn prioritized_replay_trains_dqn_and_checkpoints_reload_to_the_same_policy() {
    tch::set_num_threads(1);
    let dir = std::env::temp_dir().join(format!("rlsolver-drl-{}", std::process::id()));
    let run = TrainConfig {
        prioritized: true,
        out_dir: Some(dir.clone()),
        learning_starts: Some(500),
        ..config("d3qn", "CartPole-v1", 6000, json!({"hidden": [64, 64]}))
    };
    let outcome = train(&run).unwrap();
    check(&outcome, "CartPole-v1", 20.0);
    let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    assert_eq!(metrics.lines().count(), outcome.evaluations.len());
    let (mut agent, env_id) = rlsolver::drl::run::load_checkpoint(&dir, Device::Cpu).unwrap();
    let last = outcome.evaluations.last().unwrap();
    let (mean, _) = rlsolver::drl::run::evaluate_agent(&mut agent, &env_id, 10, last.eval_seed, Device::Cpu);
    assert_eq!(mean, last.return_mean, "reloaded policy differs");
}

#[test]
fn sac_with_the_h_term_logs_a_finite_h_term_loss_and_still_learns() {
    tch::set_num_threads(1);
    let run = TrainConfig {
        learning_starts: Some(500),
        h_term_lambda: 0.1,
        eval_every: 1500,
        ..config("sac", "Pendulum-v1", 4500, json!({"hidden": [64, 64]}))
    };
    let outcome = train(&run).unwrap();
    let last = outcome.evaluations.last().unwrap();
    assert!(last.losses["h_term_loss"].as_f64().is_some_and(f64::is_finite), "{:?}", last.losses);
    check(&outcome, "Pendulum-v1", 200.0);
}

#[test]
fn a_resumed_run_continues_from_its_checkpoint() {
    tch::set_num_threads(1);
    let dir = std::env::temp_dir().join(format!("rlsolver-resume-{}", std::process::id()));
    let first =
        TrainConfig { out_dir: Some(dir.clone()), eval_every: 1024, ..config("a2c", "Pendulum-v1", 2048, json!({})) };
    let outcome = train(&first).unwrap();
    let progress: rlsolver::drl::run::Progress =
        serde_json::from_str(&std::fs::read_to_string(dir.join("progress.json")).unwrap()).unwrap();
    assert_eq!(progress.step, outcome.steps);
    // The observation statistics moved during training and come back with the checkpoint.
    let norm = std::fs::read_to_string(dir.join("observation_norm.json")).unwrap();
    assert!(!norm.contains("\"count\":0.0001"), "{norm}");
    let second = TrainConfig { resume: true, total_steps: 4096, ..first.clone() };
    let resumed = train(&second).unwrap();
    assert_eq!(resumed.steps, 4096);
    let steps: Vec<usize> = resumed.evaluations.iter().map(|e| e.step).collect();
    assert_eq!(steps, vec![1024, 2048, 3072, 4096], "the log continues, not restarts");
    let logged = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    assert_eq!(logged.lines().count(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

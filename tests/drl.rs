//! Fast subset of the deep-RL proofs (the full threshold table is `#[ignore]`d: `make verify`):
//! every algorithm trains a short run with finite losses and is judged on its last evaluation.
//! Bars sit below the worst of seeds 0-2 (this file runs seed 0): the off-policy agents and PPO
//! on Pendulum at -500, the discrete actor-critics to 475 on CartPole, A2C and the DQN family
//! only clear of a random policy at these budgets (their thresholds are `make verify`'s).

mod common;

use rlsolver::drl::run::{train, TrainConfig, TrainOutcome};
use serde_json::{json, Value};
use tch::Device;

fn config(algorithm: &str, env_id: &str, steps: usize, overrides: Value) -> TrainConfig {
    TrainConfig {
        eval_every: steps,
        overrides,
        envs: rlsolver::problems::envs(Default::default()),
        ..TrainConfig::new(algorithm, env_id, steps, 0)
    }
}

/// Losses finite at every evaluation, and the run's last deterministic evaluation (not its best:
/// a run that learns and then collapses fails) reaches `floor`, a bar set below the documented
/// figure for the budget and well above a uniformly random policy.
fn check(outcome: &TrainOutcome, env_id: &str, floor: f64) {
    for evaluation in &outcome.evaluations {
        for (name, value) in evaluation.losses.as_object().unwrap() {
            assert!(value.as_f64().is_some_and(f64::is_finite), "{name} = {value} at step {}", evaluation.step);
        }
    }
    let curve: Vec<(usize, f64)> = outcome.evaluations.iter().map(|e| (e.step, e.return_mean)).collect();
    let last = curve.last().expect("an evaluation").1;
    let random = common::random_return(env_id);
    eprintln!("{env_id}: last return {last} (random {random}, floor {floor}); curve {curve:?}");
    assert!(floor > random, "the floor {floor} must be above a random policy's {random}");
    assert!(last >= floor, "last return {last} below {floor} (random {random}); curve {curve:?}");
}

/// Short value-based runs oscillate (seed 0's evaluations at 5k-20k steps: DQN 85, 93, 92, 92;
/// Double DQN 57, 43, 88, 50). Last evaluations at 20k over seeds 0-2, median (worst): DQN 126
/// (92), Double DQN 91 (50), D3QN 91 (27; random 22). So the bar is only 1.2x a random policy:
/// it fails a learner that learns nothing or collapses; the 475 runs are `make verify`'s.
#[test]
fn dqn_family_ends_above_twice_a_random_policy_on_cartpole() {
    tch::set_num_threads(1);
    for algorithm in ["dqn", "double_dqn", "d3qn"] {
        let run = TrainConfig {
            eval_every: 5000,
            ..config(algorithm, "CartPole-v1", 20_000, json!({"learning_starts": 500}))
        };
        check(&train(&run).unwrap(), "CartPole-v1", 1.2 * common::random_return("CartPole-v1"));
    }
}

/// The discrete actor-critics reach the documented 475 on CartPole, confirmed over 100 fresh
/// episodes, within the verify table's budgets, with their defaults (seeds 0-2: PPO-discrete at
/// 20,224 / 15,104 / 25,088 steps, A2C-discrete at 80,000 / 80,000 / 10,000).
#[test]
fn discrete_actor_critics_reach_475_on_cartpole() {
    tch::set_num_threads(1);
    for (algorithm, budget, eval_every) in [("ppo_discrete", 100_000, 5_000), ("a2c_discrete", 200_000, 10_000)] {
        let run = TrainConfig {
            eval_every,
            target_return: Some(475.0),
            ..TrainConfig::new(algorithm, "CartPole-v1", budget, 0)
        };
        let outcome = train(&run).unwrap();
        let curve: Vec<(usize, f64)> = outcome.evaluations.iter().map(|e| (e.step, e.return_mean)).collect();
        eprintln!("{algorithm}: reached 475 at {:?}; curve {curve:?}", outcome.reached_target_at);
        assert!(outcome.reached_target_at.is_some(), "{algorithm} missed 475 in {budget} steps: {curve:?}");
    }
}

/// Last evaluations over seeds 0-2, median (worst): DDPG -178 (-215), TD3 -194 (-217), SAC
/// -172 (-204), REDQ -170 (-200); random -1345. TD3 at 6k steps: -242, -592, -411.
#[test]
fn off_policy_continuous_agents_learn_pendulum() {
    tch::set_num_threads(1);
    let small = json!({"hidden": [64, 64], "learning_starts": 500});
    for (algorithm, steps) in [("ddpg", 5000), ("td3", 7000), ("sac", 5000)] {
        check(&train(&config(algorithm, "Pendulum-v1", steps, small.clone())).unwrap(), "Pendulum-v1", -500.0);
    }
    let redq =
        config("redq", "Pendulum-v1", 1500, json!({"hidden": [64, 64], "batch_size": 128, "learning_starts": 300}));
    check(&train(&redq).unwrap(), "Pendulum-v1", -500.0);
}

/// The on-policy continuous agents with their defaults (PPO and A2C with gSDE; `make verify`
/// takes them to -200 at 200k and 500k steps). Seeds 0-2, median (worst): PPO at 41k -162
/// (-193); A2C at 150k only under way, -767 (-1040), so its bar is random + 200.
#[test]
fn on_policy_continuous_agents_learn_pendulum() {
    tch::set_num_threads(1);
    let ppo = TrainConfig { eval_every: 10_240, ..config("ppo", "Pendulum-v1", 40_960, json!({})) };
    check(&train(&ppo).unwrap(), "Pendulum-v1", -500.0);
    let a2c = TrainConfig { eval_every: 50_000, ..config("a2c", "Pendulum-v1", 150_000, json!({})) };
    check(&train(&a2c).unwrap(), "Pendulum-v1", common::random_return("Pendulum-v1") + 200.0);
}

#[test]
fn prioritized_replay_trains_dqn_and_checkpoints_reload_to_the_same_policy() {
    tch::set_num_threads(1);
    let dir = std::env::temp_dir().join(format!("rlsolver-drl-{}", std::process::id()));
    let run = TrainConfig {
        prioritized: true,
        out_dir: Some(dir.clone()),
        ..config("d3qn", "CartPole-v1", 6000, json!({"hidden": [64, 64], "learning_starts": 500}))
    };
    let outcome = train(&run).unwrap();
    // Seeds 0-4 at 6,000 steps: 54.9, 218.2, 500, 62.6, 139.9 (random 21.8): the bar is twice
    // a random policy, below the worst seed, as for the DQN family above.
    check(&outcome, "CartPole-v1", 2.0 * common::random_return("CartPole-v1"));
    let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    assert_eq!(metrics.lines().count(), outcome.evaluations.len());
    let (mut learner, env_id) =
        rlsolver::drl::run::load_checkpoint(&dir, Device::Cpu, &rlsolver::problems::envs(Default::default())).unwrap();
    let last = outcome.evaluations.last().unwrap();
    let (mean, _) = rlsolver::drl::run::evaluate_learner(
        &mut learner,
        &env_id,
        &Value::Null,
        10,
        last.eval_seed,
        Device::Cpu,
        &rlsolver::problems::envs(Default::default()),
    )
    .unwrap();
    assert_eq!(mean, last.return_mean, "reloaded policy differs");
}

#[test]
fn sac_with_the_h_term_logs_a_finite_h_term_loss_and_still_learns() {
    tch::set_num_threads(1);
    let run = TrainConfig {
        h_term_lambda: 0.1,
        eval_every: 1500,
        ..config("sac", "Pendulum-v1", 4500, json!({"hidden": [64, 64], "learning_starts": 500}))
    };
    let outcome = train(&run).unwrap();
    let last = outcome.evaluations.last().unwrap();
    assert!(last.losses["h_term_loss"].as_f64().is_some_and(f64::is_finite), "{:?}", last.losses);
    // Seeds 0-2 at 4,500 steps: -135, -216, -137.
    check(&outcome, "Pendulum-v1", -400.0);
}

/// A run of 2N steps, and the same run stopped at N and resumed, end bit for bit the same:
/// weights, evaluations, losses, and what they log.
fn resumes_exactly(first: TrainConfig, half: usize) {
    let base = std::env::temp_dir().join(format!("rlsolver-exact-{}-{}", first.algorithm, std::process::id()));
    let (whole_dir, split_dir) = (base.join("whole"), base.join("split"));
    let first = TrainConfig { total_steps: 2 * half, ..first };
    let whole = train(&TrainConfig { out_dir: Some(whole_dir.clone()), ..first.clone() }).unwrap();
    let stopped =
        train(&TrainConfig { out_dir: Some(split_dir.clone()), hooks: common::stop_at(half), ..first.clone() })
            .unwrap();
    assert_eq!((stopped.steps, stopped.cancelled), (half, true));
    let resumed = train(&TrainConfig { out_dir: Some(split_dir.clone()), resume: true, ..first }).unwrap();
    assert_eq!(resumed.steps, whole.steps);
    let returns = |o: &TrainOutcome| o.evaluations.iter().map(|e| (e.step, e.return_mean)).collect::<Vec<_>>();
    assert_eq!(returns(&resumed), returns(&whole), "the resumed run's evaluations differ");
    let losses = |o: &TrainOutcome| o.evaluations.last().unwrap().losses.clone();
    assert_eq!(losses(&resumed), losses(&whole));
    let (a, b) = (common::policy_weights(&whole_dir), common::policy_weights(&split_dir));
    assert!(!a.is_empty() && a.len() == b.len());
    for ((name, u), (_, v)) in a.iter().zip(&b) {
        assert!(u.equal(v), "{name} differs after the resume");
    }
    let logged = std::fs::read_to_string(split_dir.join("metrics.jsonl")).unwrap();
    assert_eq!(logged.lines().count(), whole.evaluations.len(), "the log continues, not restarts");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn a_resumed_on_policy_run_continues_exactly() {
    tch::set_num_threads(1);
    // A2C on Pendulum: RMSprop, gSDE noise held across the stop, running observation statistics.
    resumes_exactly(TrainConfig { eval_every: 512, ..config("a2c", "Pendulum-v1", 0, json!({})) }, 1024);
}

#[test]
fn a_resumed_off_policy_run_continues_exactly() {
    tch::set_num_threads(1);
    // D3QN with prioritized replay (sum tree, beta schedule), epsilon schedule, target copies.
    let dqn = json!({"hidden": [32, 32], "learning_starts": 300, "train_every": 64, "updates_per_train": 8});
    resumes_exactly(TrainConfig { eval_every: 700, prioritized: true, ..config("d3qn", "CartPole-v1", 0, dqn) }, 1400);
    // SAC: Adam moments of three optimizers, the temperature, the replay, Gaussian noise streams.
    let sac = json!({"hidden": [32, 32], "learning_starts": 200, "batch_size": 64});
    resumes_exactly(TrainConfig { eval_every: 400, ..config("sac", "Pendulum-v1", 0, sac) }, 600);
}

#[test]
fn concurrent_runs_in_one_process_give_what_each_gives_alone() {
    tch::set_num_threads(1);
    let run = |seed| {
        let config = TrainConfig { seed, eval_every: 2048, ..config("ppo_discrete", "CartPole-v1", 4096, json!({})) };
        train(&config).unwrap().evaluations.iter().map(|e| e.return_mean).collect::<Vec<_>>()
    };
    let alone: Vec<_> = (1..=3).map(run).collect();
    let together: Vec<_> = (1..=3)
        .map(|seed| std::thread::spawn(move || run(seed)))
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    assert_eq!(alone, together);
}

/// A run on an OR-Gym env with changed parameters keeps them: `config.json` records the
/// `env_config`, the monitor evaluated on that env, and the saved policy reloads and evaluates
/// on it to the monitor's last figure (TSP-v1 on 12 nodes with node features, 49 more columns).
#[test]
fn env_config_travels_with_the_run() {
    tch::set_num_threads(1);
    let dir = std::env::temp_dir().join(format!("rlsolver-env-config-{}", std::process::id()));
    let env_config = json!({"nodes": 12, "node_features": true, "negate_distance": true});
    let run = TrainConfig {
        env_config: env_config.clone(),
        out_dir: Some(dir.clone()),
        ..config("ppo_discrete", "TSP-v1", 512, json!({}))
    };
    let outcome = train(&run).unwrap();
    let last = outcome.evaluations.last().unwrap();
    // Eleven moves between points of the unit square, each reward minus a length below sqrt 2.
    // The default TSP-v1 (50 nodes) has 49 moves: a policy this briefly trained scores about
    // -25 there (README: random valid moves -25.6), below what any 12-node tour can cost.
    assert!(last.return_mean < 0.0 && last.return_mean > -11.0 * 2f64.sqrt(), "{}", last.return_mean);
    let default_env = rlsolver::problems::envs(Default::default()).make_configured("TSP-v1", 1, &Value::Null).unwrap();
    let configured = rlsolver::problems::envs(Default::default()).make_configured("TSP-v1", 1, &env_config).unwrap();
    assert_ne!(default_env.observation_dim(), configured.observation_dim(), "the config changes the observation");
    let saved = rlsolver::drl::run::checkpoint_env_config(&dir).unwrap();
    assert_eq!(saved, env_config);
    let (mut learner, env_id) =
        rlsolver::drl::run::load_checkpoint(&dir, Device::Cpu, &rlsolver::problems::envs(Default::default())).unwrap();
    let (mean, _) = rlsolver::drl::run::evaluate_learner(
        &mut learner,
        &env_id,
        &saved,
        10,
        last.eval_seed,
        Device::Cpu,
        &rlsolver::problems::envs(Default::default()),
    )
    .unwrap();
    assert_eq!(mean, last.return_mean, "reloaded policy differs");
    let bad = TrainConfig { env_config: json!({"nodes": 1}), ..config("ppo_discrete", "TSP-v1", 512, json!({})) };
    let Err(error) = train(&bad) else { panic!("nodes 1 is refused") };
    let error = format!("{error:#}");
    assert!(error.contains("env_config") && error.contains("nodes"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// PPO-discrete on 256 CartPole envs held as tensors reaches the 475 threshold, as
/// confirmed by the monitor's fresh native episodes; runs the device loop cannot honour are refused.
#[test]
fn ppo_on_device_envs_solves_cartpole_and_refuses_what_it_cannot_do() {
    let run = |overrides: TrainConfig| rlsolver::drl::run::train_on_device(&overrides, 256);
    let base = TrainConfig {
        eval_every: 16 * 256,
        target_return: Some(475.0),
        ..TrainConfig::new("ppo_discrete", "CartPole-v1", 1_000_000, 0)
    };
    let outcome = run(base.clone()).unwrap();
    let reached = outcome.reached_target_at.expect("475 within 1M steps on 256 device envs");
    assert!(outcome.evaluations.iter().any(|e| e.return_mean >= 475.0));
    assert!(reached % (16 * 256) == 0, "steps come in whole rollouts: {reached}");
    for (bad, says) in [
        (TrainConfig { out_dir: Some(std::env::temp_dir()), ..base.clone() }, "checkpoints"),
        (TrainConfig { env_id: "Knapsack-v1".into(), ..base.clone() }, "device envs exist for"),
        (TrainConfig { algorithm: "sac".into(), env_id: "Pendulum-v1".into(), ..base.clone() }, "on-policy"),
    ] {
        let Err(error) = run(bad) else { panic!("accepted a run that needs '{says}'") };
        let error = error.to_string();
        assert!(error.contains(says), "{error}");
    }
}

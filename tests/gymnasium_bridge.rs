//! The Gymnasium bridge (`gymnasium:<id>`): the `VecEnv` contract checked step by step against
//! gymnasium itself run in a separate Python process, structured spaces, restarts after a crash
//! and a hang, training through it (library and HTTP), and the 422s of bad env ids.
//! Needs the project's `.venv` with gymnasium and MuJoCo (`make simulators`); without them the
//! tests skip with a reason, and fail under CI=true.

mod common;

use rlsolver::drl::env::gymnasium::{self, BridgeConfig, GymnasiumVecEnv};
use rlsolver::drl::env::{ActionSpace, VecEnv};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The bridge settings of these tests when the venv's Python imports `modules` (its Python, two
/// workers, a short step timeout for the hang test), else None with a printed reason (a failure
/// under CI=true).
fn python_with(modules: &str) -> Option<BridgeConfig> {
    let python = root().join(".venv/bin/python");
    let ok = Command::new(&python).args(["-c", &format!("import {modules}")]).status().is_ok_and(|s| s.success());
    if ok {
        return Some(BridgeConfig {
            python,
            max_workers: 2,
            step_timeout: Duration::from_secs(3),
            ..BridgeConfig::default()
        });
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true but {} cannot import {modules} (make simulators)", python.display());
    }
    eprintln!("skipping: {} cannot import {modules} (make simulators)", python.display());
    None
}

/// Runs `script` in Python with `input` as JSON on stdin; returns its stdout as JSON.
fn python_json(python: &PathBuf, script: &str, input: &Value) -> Value {
    use std::io::Write;
    let mut child = Command::new(python)
        .args(["-c", script])
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "reference script failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// gymnasium's own env, one per row, reset with the bridge's seeds and stepped with the same
/// actions, auto-reset as the bridge's contract says: the independent reference.
const REFERENCE: &str = r#"
import json, sys
import numpy as np, gymnasium as gym
spec = json.load(sys.stdin)
envs = [gym.make(spec["id"]) for _ in spec["seeds"]]
obs = [env.reset(seed=s)[0].tolist() for env, s in zip(envs, spec["seeds"])]
steps = []
for actions in spec["actions"]:
    row = {"obs": [], "rewards": [], "terminated": [], "truncated": [], "final": []}
    for env, a in zip(envs, actions):
        box = isinstance(env.action_space, gym.spaces.Box)
        a = np.clip(np.array(a, dtype=np.float32), env.action_space.low, env.action_space.high) if box else int(a[0])
        o, r, te, tr, _ = env.step(a)
        fin = o.tolist() if (te or tr) else [0.0] * len(o)
        if te or tr:
            o, _ = env.reset()
        row["obs"].append(o.tolist()); row["rewards"].append(float(r))
        row["terminated"].append(bool(te)); row["truncated"].append(bool(tr)); row["final"].append(fin)
    steps.append(row)
print(json.dumps({"reset": obs, "steps": steps}))
"#;

fn close(a: &[f32], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (f64::from(*x) - y).abs() <= 1e-5 * (1.0 + y.abs()))
}

/// Steps `id` through the bridge (5 envs over 2 workers) and through gymnasium directly with
/// the same seeds and actions; every row of every step must agree.
fn check_against_gymnasium(bridge: &BridgeConfig, id: &str, steps: usize, action: impl Fn(usize, usize) -> Vec<f32>) {
    let b = 5;
    let mut env = GymnasiumVecEnv::new(id, b, &Value::Null, bridge).unwrap();
    assert_eq!(env.worker_pids().len(), 2);
    let dim = env.observation_dim();
    let seed = 11;
    let reset = env.reset(seed);
    let actions: Vec<Vec<Vec<f32>>> = (0..steps).map(|t| (0..b).map(|i| action(t, i)).collect()).collect();
    let seeds: Vec<u64> = (0..b).map(|i| gymnasium::env_seed(seed, 0, i)).collect();
    let reference = python_json(&bridge.python, REFERENCE, &json!({"id": id, "seeds": seeds, "actions": actions}));
    let rows = |v: &Value| -> Vec<Vec<f64>> { serde_json::from_value(v.clone()).unwrap() };
    for (i, row) in rows(&reference["reset"]).iter().enumerate() {
        assert!(close(&reset[i * dim..(i + 1) * dim], row), "{id}: reset row {i}");
    }
    let (mut finished, mut truncated) = (0, 0);
    for (t, expected) in reference["steps"].as_array().unwrap().iter().enumerate() {
        let flat: Vec<f32> = actions[t].concat();
        let step = env.step(&flat);
        for i in 0..b {
            let at = format!("{id}: step {t} env {i}");
            assert!(close(&step.observations[i * dim..(i + 1) * dim], &rows(&expected["obs"])[i]), "{at} obs");
            assert!(
                close(&step.final_observations[i * dim..(i + 1) * dim], &rows(&expected["final"])[i]),
                "{at} final"
            );
            assert!(
                (f64::from(step.rewards[i]) - expected["rewards"][i].as_f64().unwrap()).abs() < 1e-4,
                "{at} reward"
            );
            assert_eq!(step.terminated[i], expected["terminated"][i].as_bool().unwrap(), "{at} terminated");
            assert_eq!(step.truncated[i], expected["truncated"][i].as_bool().unwrap(), "{at} truncated");
            finished += usize::from(step.terminated[i] || step.truncated[i]);
            truncated += usize::from(step.truncated[i]);
        }
    }
    // The comparison covered auto-resets (and, for Pendulum, the time limit).
    assert!(finished > 0, "{id}: no episode ended in {steps} steps");
    if id == "Pendulum-v1" {
        assert_eq!(truncated, b, "Pendulum truncates each env once at 200 steps");
    }
}

#[test]
fn bridged_envs_step_exactly_as_gymnasium() {
    let Some(bridge) = python_with("gymnasium") else { return };
    check_against_gymnasium(&bridge, "CartPole-v1", 60, |t, i| vec![((t * 7 + i * 3) % 5 < 2) as u8 as f32]);
    check_against_gymnasium(&bridge, "Pendulum-v1", 210, |t, i| vec![((t + i) as f32 * 0.37).sin() * 2.0]);
}

#[test]
fn mujoco_envs_step_exactly_as_gymnasium() {
    let Some(bridge) = python_with("mujoco, gymnasium") else { return };
    // Half the actions outside [-1, 1]: the reference clips them as the bridge's contract says.
    check_against_gymnasium(&bridge, "Hopper-v5", 120, |t, i| {
        (0..3).map(|k| ((t * 3 + k + i) as f32 * 0.61).sin() * 2.0).collect()
    });
}

#[test]
fn box_actions_outside_the_space_are_clipped_before_the_env_prices_them() {
    let Some(bridge) = python_with("gymnasium") else { return };
    // MountainCarContinuous charges 0.1 a^2 on the action it is given; clipped, 4 costs as 1.
    let mut env = GymnasiumVecEnv::new("MountainCarContinuous-v0", 3, &Value::Null, &bridge).unwrap();
    env.reset(3);
    let step = env.step(&[4.0, -4.0, 1.0]);
    for (i, action) in [4.0, -4.0, 1.0].iter().enumerate() {
        assert!((step.rewards[i] + 0.1).abs() < 1e-6, "reward {} for an action of {action}", step.rewards[i]);
    }
}

#[test]
fn same_seed_same_trajectory_and_structured_spaces_flatten() {
    let Some(bridge) = python_with("gymnasium") else { return };
    let id = "tests.python.bridge_envs:Structured-v0";
    let mut env = GymnasiumVecEnv::new(id, 3, &Value::Null, &bridge).unwrap();
    // Dict{last: Tuple(MultiDiscrete[3,4]) -> 3+4 one-hot, phase: Discrete(3) -> 3, position: Box(2)},
    // keys in sorted order as gymnasium flattens a Dict.
    assert_eq!(env.observation_dim(), 7 + 3 + 2);
    assert_eq!(env.action_space(), ActionSpace::Discrete { n: 12 });
    let first = env.reset(5);
    // Joint index 7 = (1, 3): the reward echoes 10 * 1 + 3, and the one-hots mark 1 and 3.
    let step = env.step(&[7.0, 0.0, 11.0]);
    assert_eq!(step.rewards, vec![13.0, 0.0, 23.0]);
    let row0 = &step.observations[0..12];
    assert_eq!(&row0[0..7], &[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0], "MultiDiscrete one-hots (1, 3)");
    assert_eq!(&row0[7..10], &[0.0, 1.0, 0.0], "phase 1 one-hot");
    assert_eq!(row0[10], 1.0, "position[0] = steps taken");
    // Terminated after 5 steps: the final observation shows step 5, the next one a new episode.
    let mut last = step;
    for _ in 0..4 {
        last = env.step(&[0.0, 0.0, 0.0]);
    }
    assert!(last.terminated.iter().all(|t| *t) && last.truncated.iter().all(|t| !*t));
    assert_eq!(last.final_observations[10], 5.0);
    assert_eq!(last.observations[10], 0.0);
    // The same seed on a fresh batch (other processes) repeats the starts.
    let mut again = GymnasiumVecEnv::new(id, 3, &Value::Null, &bridge).unwrap();
    assert_eq!(again.reset(5), first);
    let starts: Vec<f32> = (0..3).map(|i| first[i * 12 + 11]).collect();
    let other = again.reset(6);
    assert_ne!(starts, (0..3).map(|i| other[i * 12 + 11]).collect::<Vec<f32>>(), "seed 6 draws other starts");
}

#[test]
fn crashed_and_hung_workers_are_restarted_and_their_episodes_truncated() {
    let Some(bridge) = python_with("gymnasium") else { return };
    for (fault, after) in [("crash", 7), ("hang", 7)] {
        let id = "tests.python.bridge_envs:Faulty-v0";
        let mut env = GymnasiumVecEnv::new(id, 4, &json!({"fault": fault, "after": after}), &bridge).unwrap();
        let before = bridge.worker_restarts();
        let pids = env.worker_pids();
        let mut obs = env.reset(1);
        let mut cut = 0;
        // Each worker steps 2 envs: the process's 7th env step falls in the 4th batch step.
        for t in 0..6 {
            let step = env.step(&[0.1; 4]);
            if t == 3 {
                assert!(step.truncated.iter().all(|t| *t), "{fault}: both workers' episodes end truncated");
                assert!(step.terminated.iter().all(|t| !*t));
                // The cut episodes' final observations are their last ones before the fault.
                assert_eq!(step.final_observations, obs, "{fault}");
                cut += 4;
            } else {
                assert!(step.truncated.iter().all(|t| !*t), "{fault}: step {t}");
            }
            obs = step.observations;
        }
        assert_eq!(cut, 4);
        assert!(bridge.worker_restarts() >= before + 2, "{fault}: restarts counted");
        let now = env.worker_pids();
        assert!(now.iter().all(|p| !pids.contains(p)), "{fault}: new processes");
    }
    // A service run with these settings shows their restarts in /metrics.
    let jobs = rlsolver::jobs::JobsConfig { envs: rlsolver::problems::envs(bridge), ..Default::default() };
    let base = common::start_server(rlsolver::api::state::ServerConfig { jobs, ..Default::default() });
    let text = reqwest::blocking::get(format!("{base}/metrics")).unwrap().text().unwrap();
    let line = text.lines().find(|l| l.starts_with("rlsolver_gymnasium_worker_restarts ")).expect("metric");
    let restarts: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(restarts >= 4.0, "{line}");
}

#[test]
fn training_runs_through_the_bridge_and_resumes_with_fresh_episodes() {
    let Some(bridge) = python_with("gymnasium") else { return };
    use rlsolver::drl::run::{train, TrainConfig};
    let dir = std::env::temp_dir().join(format!("rlsolver-bridge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut config = TrainConfig::new("ppo_discrete", "gymnasium:CartPole-v1", 12_288, 3);
    config.eval_every = 4096;
    config.eval_episodes = 8;
    config.out_dir = Some(dir.clone());
    config.hooks = common::stop_at(8192);
    config.envs = rlsolver::problems::envs(bridge.clone());
    let first = train(&config).unwrap();
    assert_eq!(first.steps, 8192);
    config.hooks = Default::default();
    config.resume = true;
    let resumed = train(&config).unwrap();
    assert_eq!(resumed.steps, 12_288);
    // The resumed outcome lists the run's evaluations from its start.
    let returns: Vec<f64> = resumed.evaluations.iter().map(|e| e.return_mean).collect();
    assert_eq!(returns.len(), 3, "{returns:?}");
    assert_eq!(returns[..2], first.evaluations.iter().map(|e| e.return_mean).collect::<Vec<_>>()[..]);
    // PPO learns CartPole through the bridge: well above a random policy's ~22, in the run's
    // last evaluation and re-scored from the saved checkpoint on other episodes.
    assert!(returns[2] > 60.0, "{returns:?}");
    let (mean, _) = rlsolver::drl::run::score_checkpoint(&dir, 8, 99, &config.envs).unwrap();
    assert!(mean > 60.0, "re-scored return {mean}");
}

#[test]
fn bad_gymnasium_envs_are_422s_naming_env() {
    let Some(bridge) = python_with("gymnasium") else { return };
    let jobs = rlsolver::jobs::JobsConfig { envs: rlsolver::problems::envs(bridge), ..Default::default() };
    let base = common::start_server(rlsolver::api::state::ServerConfig { jobs, ..Default::default() });
    let client = reqwest::blocking::Client::new();
    let post = |env: &str, algorithm: &str| {
        client
            .post(format!("{base}/v1/training/jobs"))
            .json(&json!({"algorithm": algorithm, "env": env, "total_steps": 1000}))
            .send()
            .unwrap()
    };
    common::expect_422(post("gymnasium:NoSuchEnv-v0", "sac"), "env", "NameNotFound");
    common::expect_422(post("gymnasium:no_such_module:Env-v0", "sac"), "env", "No module named 'no_such_module'");
    common::expect_422(post("gymnasium:CartPole-v1", "sac"), "env", "discrete");
    // A good one is accepted.
    let accepted = post("gymnasium:Pendulum-v1", "sac");
    assert_eq!(accepted.status().as_u16(), 202);
    let job: Value = accepted.json().unwrap();
    common::cancel_training_job(&base, job["id"].as_str().unwrap());
}
